/**
 * `POST /batch`: up to `MAX_BATCH_OPS` lifecycle ops for one tracker, validated together (one bad op
 * refuses the whole batch, naming it, and applies nothing) and applied in order by one RPC call, which
 * is how a busy frontend gets past the request rate of a single object. Each op's result carries the
 * status its own route would have answered, and its text, the partition named as the request named it.
 */
import { Hono } from "hono";
import type { BatchOp } from "../../durable-objects/types";
import type { AppEnv } from "../env";
import { unwrap } from "../http/errors";
import { renameBatchResults, textPartitionField } from "../http/partition";
import { trackerFor } from "../http/stubs";
import { batchBody } from "../schema/requests";
import type { Infer } from "../schema/schema";
import { validBody } from "../schema/validate";
import { fastBatchBody } from "../wire/msgpack-bodies";
import { send } from "../wire/respond";

type WireOp = Infer<typeof batchBody>["ops"][number];

export const batch = new Hono<AppEnv>().post("/batch", validBody(batchBody, fastBatchBody), async (c) => {
  const body = c.req.valid("json");
  const { results } = unwrap(await trackerFor(c, body).batch(body.ops.map(opOf)));
  const tracker = { model: body.model_name, tenant: body.tenant_id };
  return send(c, { results: renameBatchResults(results, tracker, textPartitionField(c)) }, 200);
});

function opOf(op: WireOp): BatchOp {
  if (op.op !== "add") return { op: op.op, requestId: op.request_id };
  return {
    op: "add",
    requestId: op.request_id,
    workerId: op.worker_id,
    dpRank: op.dp_rank,
    hashes: op.sequence_hashes,
    newIslTokens: op.new_isl_tokens,
    expectedOutputTokens: op.expected_output_tokens,
    expectedPrefillDurationMs: op.expected_prefill_duration_ms,
    ...(op.owner !== undefined && { owner: op.owner }),
  };
}
