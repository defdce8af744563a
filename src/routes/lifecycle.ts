/** Request lifecycle: `POST /add`, `POST /prefill_complete`, `POST /free`. */
import { Hono } from "hono";
import type { AppEnv } from "../env";
import { readBody } from "../http/body";
import { unwrap } from "../http/errors";
import { addBody, requestIdBody } from "../http/requests";
import { sendOk } from "../http/respond";
import { trackerFor } from "../http/stubs";

export const lifecycle = new Hono<AppEnv>();

lifecycle.post("/add", async (c) => {
  const body = await readBody(c, addBody);
  const result = await trackerFor(c, body).add({
    requestId: body.request_id,
    workerId: body.worker_id,
    dpRank: body.dp_rank,
    hashes: body.sequence_hashes,
    newIslTokens: body.new_isl_tokens,
    expectedOutputTokens: body.expected_output_tokens,
    expectedPrefillDurationMs: body.expected_prefill_duration_ms,
  });
  unwrap(result);
  return sendOk(c, 201);
});

lifecycle.post("/prefill_complete", async (c) => {
  const body = await readBody(c, requestIdBody);
  unwrap(await trackerFor(c, body).prefillComplete(body.request_id));
  return sendOk(c, 200);
});

lifecycle.post("/free", async (c) => {
  const body = await readBody(c, requestIdBody);
  unwrap(await trackerFor(c, body).free(body.request_id));
  return sendOk(c, 200);
});
