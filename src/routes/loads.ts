/** Load reads: `GET /loads`, `POST /potential_loads`. */
import { Hono } from "hono";
import type { AppEnv } from "../env";
import { unwrap } from "../http/errors";
import { rowsOf } from "../http/listing";
import { compareRank, compareTracker } from "../http/order";
import { replicaOf } from "../http/replica";
import { listingQuery, potentialLoadsBody } from "../schema/requests";
import { send } from "../wire/respond";
import { trackerFor, trackerStub } from "../http/stubs";
import { visibleTrackers } from "../http/visible-trackers";
import { validBody, validQuery } from "../schema/validate";

export const loads = new Hono<AppEnv>()
  .get("/loads", validQuery(listingQuery), async (c) => {
    const filter = c.req.valid("query");
    const keys = await visibleTrackers(c, filter, replicaOf(c));
    const rows = await rowsOf(keys, async (key) =>
      (await trackerStub(c.env, key).listLoads()).map((load) => ({
        model_name: key.model,
        tenant_id: key.tenant,
        worker_id: load.workerId,
        dp_rank: load.dpRank,
        active_prefill_tokens: load.activePrefillTokens,
        active_decode_blocks: load.activeDecodeBlocks,
      })),
    );
    rows.sort((a, b) => compareTracker(a, b) || compareRank(a, b));
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
