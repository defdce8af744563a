/** Replication status: `GET /replica_sync/peers`. */
import { Hono } from "hono";
import type { AppEnv } from "../env";
import { replicaOf } from "../http/replica";
import { trackerQuery } from "../schema/requests";
import { send } from "../wire/respond";
import { trackerFor } from "../http/stubs";
import { validQuery } from "../schema/validate";

export const replication = new Hono<AppEnv>()
  /** The serving replica's view of each peer for one (model, tenant), sorted by peer name. */
  .get("/replica_sync/peers", validQuery(trackerQuery), async (c) => {
    const query = c.req.valid("query");
    const replica = replicaOf(c);
    const peers = await trackerFor(c, query).replicaStatus();
    const rows = peers
      .map((p) => ({
        peer: p.peer,
        state: p.state,
        queued_events: p.queued,
        last_acked_seq: p.acked,
        oldest_unacked_age_ms: p.oldestUnackedMs,
        consecutive_failures: p.failures,
      }))
      .sort((a, b) => (a.peer < b.peer ? -1 : a.peer > b.peer ? 1 : 0));
    return send(c, { replica, peers: rows }, 200);
  });
