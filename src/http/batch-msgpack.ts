/**
 * The fast path of a MessagePack `POST /batch` body: one pass over the bytes with the replication
 * codec's strict reader, prompts read straight into `BigUint64Array`s, no intermediate object tree
 * and no second validation walk. Profiled under load, decoding and validating a 256-op body the
 * general way (UTF-8 and duplicate-key check, `@msgpack/msgpack`, then the schema) cost about a fifth
 * of the runtime's CPU per call.
 *
 * It accepts only the plain form of a valid body — known keys, each once; integer fields in integer
 * forms; no `nil` where a value is required; strings without a leading byte order mark — and returns
 * null for anything else, which then takes the general path. So every error is worded by that one
 * path, and a body accepted here decodes to exactly what the general path gives it (a property test
 * holds the two equal, and holds that nothing the general path refuses is accepted here).
 */
import { CodecError } from "../../durable-objects/replication/codec-error";
import { MsgpackReader } from "../../durable-objects/replication/msgpack-reader";
import { MAX_BATCH_OPS, MAX_HASHES_PER_CALL } from "../../durable-objects/limits";
import { addFields, batchBody } from "./requests";
import { type Infer, SchemaError } from "./schema";

type BatchBody = Infer<typeof batchBody>;
type WireOp = BatchBody["ops"][number];

/** Thrown to leave the fast path; never escapes this module. */
class Decline extends Error {}
const DECLINE = new Decline();

/** Field bits of an op, to refuse a key that comes twice. */
const OP = 1;
const REQUEST_ID = 2;
const WORKER_ID = 4;
const DP_RANK = 8;
const HASHES = 16;
const ISL = 32;
const OUTPUT = 64;
const DURATION = 128;
const ADD_ONLY = WORKER_ID | DP_RANK | HASHES | ISL | OUTPUT | DURATION;

const { model_name: modelName, tenant_id: tenantId } = batchBody.shape;

/** The decoded body, or null when it is not in the plain form this path takes. */
export function fastBatchBody(bytes: Uint8Array): BatchBody | null {
  try {
    const r = new MsgpackReader(bytes);
    const body = readBody(r);
    r.done();
    return body;
  } catch (err) {
    if (err instanceof Decline || err instanceof CodecError || err instanceof SchemaError) return null;
    throw err;
  }
}

function readBody(r: MsgpackReader): BatchBody {
  let model: string | undefined;
  let tenant: string | undefined;
  let ops: WireOp[] | undefined;
  let seen = 0;
  for (let n = r.mapHeader("body"); n > 0; n--) {
    const key = r.key("key");
    if (key === "model_name") {
      seen = once(seen, 1);
      model = modelName.parse(plainString(r), "model_name");
    } else if (key === "tenant_id" || key === "routing_group") {
      // Either spelling, once: two of them (agreeing or not) are the general path's to judge.
      seen = once(seen, 2);
      if (!r.nil()) tenant = tenantId.parse(plainString(r), key);
    } else if (key === "ops") {
      seen = once(seen, 4);
      ops = readOps(r);
    } else throw DECLINE;
  }
  if (model === undefined || ops === undefined) throw DECLINE;
  return { model_name: model, tenant_id: tenant ?? tenantId.parse(undefined, "tenant_id"), ops };
}

function readOps(r: MsgpackReader): WireOp[] {
  const n = r.arrayHeader("ops");
  if (n > MAX_BATCH_OPS) throw DECLINE;
  r.need(n, "ops");
  const ops: WireOp[] = new Array(n);
  for (let i = 0; i < n; i++) ops[i] = readOp(r);
  return ops;
}

function readOp(r: MsgpackReader): WireOp {
  let tag: string | undefined;
  let requestId: string | undefined;
  let workerId: bigint | undefined;
  let dpRank: number | undefined;
  let hashes: BigUint64Array | undefined;
  let isl: number | undefined;
  let output: number | undefined;
  let duration: number | undefined;
  let seen = 0;
  for (let n = r.mapHeader("op"); n > 0; n--) {
    const key = r.key("key");
    if (key === "op") {
      seen = once(seen, OP);
      tag = r.key("op");
    } else if (key === "request_id") {
      seen = once(seen, REQUEST_ID);
      requestId = addFields.request_id.parse(plainString(r), key);
    } else if (key === "worker_id") {
      seen = once(seen, WORKER_ID);
      workerId = r.bigU64(key);
    } else if (key === "dp_rank") {
      seen = once(seen, DP_RANK);
      dpRank = r.u32(key);
    } else if (key === "sequence_hashes") {
      seen = once(seen, HASHES);
      hashes = r.hashes(key);
      if (hashes.length > MAX_HASHES_PER_CALL) throw DECLINE;
    } else if (key === "new_isl_tokens") {
      seen = once(seen, ISL);
      if (!r.nil()) isl = r.uint(key);
    } else if (key === "expected_output_tokens") {
      seen = once(seen, OUTPUT);
      if (!r.nil()) output = r.u32(key);
    } else if (key === "expected_prefill_duration_ms") {
      seen = once(seen, DURATION);
      if (!r.nil()) duration = nonNegative(r.f64(key));
    } else throw DECLINE;
  }
  if (requestId === undefined) throw DECLINE;
  if (tag === "prefill_complete" || tag === "free") {
    // Fields of an add on another op are ignored by the general path; they are rare enough to leave it.
    if ((seen & ADD_ONLY) !== 0) throw DECLINE;
    return { request_id: requestId, op: tag };
  }
  if (tag !== "add" || workerId === undefined || dpRank === undefined || hashes === undefined) throw DECLINE;
  // The general path's shape and key order: every field of the op, `op` last.
  return {
    request_id: requestId,
    worker_id: workerId,
    dp_rank: dpRank,
    sequence_hashes: hashes,
    new_isl_tokens: isl ?? 0,
    expected_output_tokens: output,
    expected_prefill_duration_ms: duration,
    op: "add",
  };
}

/** Sets `bit` in `seen`, declining a key that came before. */
function once(seen: number, bit: number): number {
  if ((seen & bit) !== 0) throw DECLINE;
  return seen | bit;
}

/**
 * A string that the general decoder reads the same way: one starting with a byte order mark is
 * declined, as that decoder drops the mark from long strings.
 */
function plainString(r: MsgpackReader): string {
  const s = r.str("string");
  if (s.charCodeAt(0) === 0xfeff) throw DECLINE;
  return s;
}

function nonNegative(x: number): number {
  if (!Number.isFinite(x) || x < 0) throw DECLINE;
  return x;
}
