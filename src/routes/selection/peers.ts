/**
 * The replica peer routes under `/selection/replica_sync/` (admin). Peers here are not dialled at
 * run time: they are the other replicas named by the `REPLICAS` variable, and every tracker
 * replicates to its peer objects there (SPEC §5). So `peers` lists those names, sorted, and
 * registering or deregistering a peer is refused with 409, Dynamo's status for a mesh that cannot
 * take one, the client's cue to stop trying: naming `REPLICAS` where replicas are configured, and
 * with Dynamo's own "replica sync is disabled" where there is one replica, as Dynamo answers when
 * no sync port is set.
 */
import { Hono } from "hono";
import { compareUtf8 } from "../../../durable-objects/core/order";
import type { AppEnv } from "../../env";
import { HttpError } from "../../http/errors";
import { parseReplicas, replicaOf } from "../../http/replica";
import { replicaPeerBody } from "../../schema/selection/replica-peers";
import { validBody } from "../../schema/validate";
import { send } from "../../wire/respond";

function refusePeers(replicas: readonly string[]): never {
  if (replicas.length <= 1) throw new HttpError(409, "replica sync is disabled");
  throw new HttpError(
    409,
    `replica peers are the replicas named by REPLICAS (${replicas.join(", ")}); change REPLICAS and deploy to add or remove one`,
  );
}

export const peers = new Hono<AppEnv>()
  .get("/replica_sync/peers", (c) => {
    const serving = replicaOf(c);
    const others = parseReplicas(c.env.REPLICAS).filter((replica) => replica !== serving);
    return send(c, others.sort(compareUtf8), 200);
  })
  .post("/replica_sync/register_peer", validBody(replicaPeerBody), (c) =>
    refusePeers(parseReplicas(c.env.REPLICAS)),
  )
  .post("/replica_sync/deregister_peer", validBody(replicaPeerBody), (c) =>
    refusePeers(parseReplicas(c.env.REPLICAS)),
  );
