/** Request lifecycle: `POST /add`, `POST /prefill_complete`, `POST /free`. */
import { Hono } from "hono";
import type { AppEnv } from "../env";
import { unwrap } from "../http/errors";
import { fastAddBody, fastRequestIdBody } from "../wire/msgpack-bodies";
import { addBody, requestIdBody } from "../schema/requests";
import { sendOk } from "../wire/respond";
import { trackerFor } from "../http/stubs";
import { validBody } from "../schema/validate";

export const lifecycle = new Hono<AppEnv>()
  .post("/add", validBody(addBody, fastAddBody), async (c) => {
    const body = c.req.valid("json");
    const result = await trackerFor(c, body).add({
      requestId: body.request_id,
      workerId: body.worker_id,
      dpRank: body.dp_rank,
      hashes: body.sequence_hashes,
      newIslTokens: body.new_isl_tokens,
      expectedOutputTokens: body.expected_output_tokens,
      expectedPrefillDurationMs: body.expected_prefill_duration_ms,
      ...(body.owner !== undefined && { owner: body.owner }),
    });
    unwrap(result);
    return sendOk(c, 201);
  })
  .post("/prefill_complete", validBody(requestIdBody, fastRequestIdBody), async (c) => {
    const body = c.req.valid("json");
    unwrap(await trackerFor(c, body).prefillComplete(body.request_id));
    return sendOk(c, 200);
  })
  .post("/free", validBody(requestIdBody, fastRequestIdBody), async (c) => {
    const body = c.req.valid("json");
    unwrap(await trackerFor(c, body).free(body.request_id));
    return sendOk(c, 200);
  });
