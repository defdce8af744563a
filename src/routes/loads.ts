/** Load reads: `GET /loads`, `POST /potential_loads`. */
import { Hono } from "hono";
import type { AppEnv } from "../env";
import { unwrap } from "../http/errors";
import { rowsOf } from "../http/listing";
import { compareRank, compareTracker } from "../http/order";
import { configuredPartitionField, partitionEntry } from "../http/partition";
import { replicaOf } from "../http/replica";
import { trackerFor, trackerStub } from "../http/stubs";
import { visibleTrackers } from "../http/visible-trackers";
import { listingQuery, potentialLoadsBody } from "../schema/requests";
import { validBody, validQuery } from "../schema/validate";
import { send } from "../wire/respond";

export const loads = new Hono<AppEnv>()
  // Sorted by (model, tenant, worker_id, dp_rank): trackers in order, each tracker's ranks in order.
  .get("/loads", validQuery(listingQuery), async (c) => {
    const filter = c.req.valid("query");
    const field = configuredPartitionField(c.env);
    const keys = (await visibleTrackers(c, filter, replicaOf(c))).sort(compareTracker);
    const rows = await rowsOf(keys, async (key) =>
      (await trackerStub(c.env, key).listLoads())
        .map((load) => ({
          model_name: key.model,
          ...partitionEntry(field, key.tenant),
          worker_id: load.workerId,
          dp_rank: load.dpRank,
          active_prefill_tokens: load.activePrefillTokens,
          active_decode_blocks: load.activeDecodeBlocks,
        }))
        .sort(compareRank),
    );
    return send(c, rows, 200);
  })
  .post("/potential_loads", validBody(potentialLoadsBody), async (c) => {
    const body = c.req.valid("json");
    const result = await trackerFor(c, body).potentialLoads(body.sequence_hashes, body.new_isl_tokens);
    const rows = unwrap(result).loads.map((load) => ({
      worker_id: load.workerId,
      dp_rank: load.dpRank,
      potential_prefill_tokens: load.potentialPrefillTokens,
      potential_decode_blocks: load.potentialDecodeBlocks,
      active_requests: load.activeRequests,
    }));
    rows.sort(compareRank);
    return send(c, rows, 200);
  });
