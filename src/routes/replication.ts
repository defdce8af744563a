/** Replication status: `GET /replica_sync/peers`. */
import { Hono } from "hono";
import type { AppEnv } from "../env";
import { replicaOf } from "../http/replica";
import { trackerQuery } from "../http/requests";
import { send } from "../http/respond";
import { trackerStub } from "../http/stubs";

export const replication = new Hono<AppEnv>();

/** The serving replica's view of each peer for one (model, tenant), sorted by peer name. */
replication.get("/replica_sync/peers", async (c) => {
  const query = trackerQuery.parse(c.req.query(), "");
  const replica = replicaOf(c);
  const peers = await trackerStub(c.env, { replica, model: query.model_name, tenant: query.tenant_id }).replicaStatus();
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
