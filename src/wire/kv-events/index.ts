/**
 * The engine KV-event body decoder of `POST /kv_events` (SPEC §9): the body's bytes, MessagePack as
 * engines publish it on ZMQ (one or more concatenated batches), to the batches of ops the tracker
 * object applies, each stored block already hashed into Dynamo's public local block hash. Pure and
 * total: every input gives a result, never an exception.
 *
 * Forms and fields: `batches.ts` (batches), `fields.ts` (events, both wire forms), `ops.ts` (what is
 * kept, skipped or refused), `tier.ts`, `groups.ts`, `extra-keys.ts`, `tokens.ts`.
 */
import { decodeMulti } from "@msgpack/msgpack";
import type { KvEventBatch } from "../../../durable-objects/kv-event-types";
import { MSGPACK_OPTIONS, msgpackProblem } from "../body";
import { checkMsgpack } from "../msgpack-check";
import { CallState, readBatch } from "./batches";
import { KvProblem } from "./problem";
import type { KvDecodeOptions, KvDecodeResult } from "./types";

export { MAX_KV_BLOCKS_PER_CALL, MAX_KV_EVENTS_PER_CALL } from "../../../durable-objects/limits";
export type { KvDecodeOptions, KvDecodeResult } from "./types";

export function decodeKvEventBody(body: Uint8Array, options: KvDecodeOptions): KvDecodeResult {
  try {
    return decode(body, options);
  } catch (err) {
    if (err instanceof KvProblem) return { ok: false, status: err.status, error: err.message };
    return { ok: false, status: 400, error: `invalid KV event body: ${msgpackProblem(err)}` };
  }
}

function decode(body: Uint8Array, options: KvDecodeOptions): KvDecodeResult & { ok: true } {
  if (body.byteLength === 0) throw new KvProblem(400, "the body holds no KV event batch");
  try {
    // Strings that are not UTF-8 and repeated keys, which the decoder would let through.
    checkMsgpack(body);
  } catch (err) {
    throw new KvProblem(400, `invalid MessagePack body: ${msgpackProblem(err)}`);
  }
  // Every element takes at least one byte, so no array or map is longer than the body.
  const decoding = { ...MSGPACK_OPTIONS, maxArrayLength: body.byteLength, maxMapLength: body.byteLength };
  const call = new CallState(options.dpRank ?? null);
  const batches: KvEventBatch[] = [];
  const values = decodeMulti(body, decoding);
  for (;;) {
    let next: IteratorResult<unknown>;
    try {
      next = values.next();
    } catch (err) {
      throw new KvProblem(400, `invalid MessagePack body in batch ${batches.length}: ${msgpackProblem(err)}`);
    }
    if (next.done) break;
    batches.push(readBatch(next.value, batches.length, call));
  }
  return { ok: true, batches, events: call.events, blocks: call.blocks, skipped: call.skipped };
}
