/**
 * The fast path of MessagePack lifecycle bodies (`/add`, `/prefill_complete`, `/free`, `/batch`):
 * one pass over the bytes with the replication codec's strict reader, prompts read straight into
 * `BigUint64Array`s, no intermediate object tree and no second validation walk. Profiled under load,
 * decoding and validating a 256-op `/batch` body the general way (UTF-8 and duplicate-key check,
 * `@msgpack/msgpack`, then the schema) cost about a fifth of the runtime's CPU per call.
 *
 * It accepts only the plain form of a valid body — known keys, each once; integer fields in integer
 * forms; no `nil` where a value is required; strings without a leading byte order mark — and returns
 * null for anything else, which then takes the general path. So every error is worded by that one
 * path, and a body accepted here decodes to exactly what the general path gives it (a property test
 * holds the two equal, and holds that nothing the general path refuses is accepted here).
 */

import { MAX_BATCH_OPS, MAX_HASHES_PER_CALL } from "../../durable-objects/limits";
import { CodecError } from "../../durable-objects/replication/codec-error";
import { MsgpackReader } from "../../durable-objects/replication/msgpack-reader";
import type { PartitionField } from "../schema/partition";
import { addBody, addFields, type batchBody, type requestIdBody } from "../schema/requests";
import { type Infer, SchemaError } from "../schema/schema";
import type { FastMsgpack } from "./body";

type BatchBody = Infer<typeof batchBody>;
type WireOp = BatchBody["ops"][number];

/** Thrown to leave the fast path; never escapes this module. */
class Decline extends Error {}
const DECLINE = new Decline();

/** Key bits, to allow a set of keys per body and refuse a key that comes twice. */
const MODEL = 1;
const TENANT = 2;
const OPS = 4;
const OP = 8;
const REQUEST_ID = 16;
const WORKER_ID = 32;
const DP_RANK = 64;
const HASHES = 128;
const ISL = 256;
const OUTPUT = 512;
const DURATION = 1024;
const OWNER = 2048;
const TRACKER = MODEL | TENANT;
const ADD_ONLY = WORKER_ID | DP_RANK | HASHES | ISL | OUTPUT | DURATION | OWNER;

const { model_name: modelName, tenant_id: tenantId } = addBody.shape;

/** The fields of one map, reused from map to map so that reading an op allocates only its result. */
class Fields {
  seen = 0;
  model = "";
  tenant: string | undefined;
  /** The name the tenant's value came under (`PartitionNaming`); a nil value names nothing. */
  tenantField: PartitionField | undefined;
  tag = "";
  requestId = "";
  workerId = 0n;
  dpRank = 0;
  hashes: BigUint64Array | undefined;
  isl: number | undefined;
  output: number | undefined;
  duration: number | undefined;
  owner: string | undefined;
  ops: WireOp[] | undefined;

  /** Reads a map whose keys must be among `allowed`, each present in `required`. */
  read(r: MsgpackReader, allowed: number, required: number): this {
    this.seen = 0;
    this.tenant = this.tenantField = this.isl = this.output = this.duration = this.owner = undefined;
    for (let n = r.mapHeader("map"); n > 0; n--) this.field(r, r.key("key"), allowed);
    if ((this.seen & required) !== required) throw DECLINE;
    return this;
  }

  private field(r: MsgpackReader, key: string, allowed: number): void {
    const bit = KEY_BITS.get(key) ?? 0;
    if ((bit & allowed) === 0 || (bit & this.seen) !== 0) throw DECLINE;
    this.seen |= bit;
    if (bit === REQUEST_ID) this.requestId = addFields.request_id.parse(plainString(r), key);
    else if (bit === OP) this.tag = r.key(key);
    else if (bit === WORKER_ID) this.workerId = r.bigU64(key);
    else if (bit === DP_RANK) this.dpRank = r.u32(key);
    else if (bit === HASHES) {
      this.hashes = r.hashes(key);
      if (this.hashes.length > MAX_HASHES_PER_CALL) throw DECLINE;
    } else if (r.nil()) {
      // `nil` reads as absent where a field may be left out; anywhere else it is declined below.
      if (bit !== TENANT && bit !== ISL && bit !== OUTPUT && bit !== DURATION && bit !== OWNER) throw DECLINE;
    } else if (bit === ISL) this.isl = r.uint(key);
    else if (bit === OUTPUT) this.output = r.u32(key);
    else if (bit === DURATION) this.duration = nonNegative(r.f64(key));
    else if (bit === OWNER) this.owner = addFields.owner.parse(plainString(r), key);
    else if (bit === MODEL) this.model = modelName.parse(plainString(r), key);
    // Either spelling of the tenant, once: both (agreeing or not) are the general path's to judge.
    else if (bit === TENANT) {
      this.tenant = tenantId.parse(plainString(r), key);
      this.tenantField = key as PartitionField;
    } else this.ops = readOps(r);
  }

  tenantOrDefault(): string {
    return this.tenant ?? tenantId.parse(undefined, "tenant_id");
  }
}

const KEY_BITS = new Map<string, number>([
  ["model_name", MODEL],
  ["tenant_id", TENANT],
  ["routing_group", TENANT],
  ["ops", OPS],
  ["op", OP],
  ["request_id", REQUEST_ID],
  ["worker_id", WORKER_ID],
  ["dp_rank", DP_RANK],
  ["sequence_hashes", HASHES],
  ["new_isl_tokens", ISL],
  ["expected_output_tokens", OUTPUT],
  ["expected_prefill_duration_ms", DURATION],
  ["owner", OWNER],
]);

/** Wraps a body reader: null for anything it declines or cannot read. */
function fast<T>(read: (r: MsgpackReader, f: Fields) => T): FastMsgpack<T> {
  const fields = new Fields();
  return (bytes) => {
    try {
      const r = new MsgpackReader(bytes);
      const body = read(r, fields);
      r.done();
      return body;
    } catch (err) {
      if (err instanceof Decline || err instanceof CodecError || err instanceof SchemaError) return null;
      throw err;
    }
  };
}

/** `POST /batch`. */
export const fastBatchBody = fast<BatchBody>((r, f) => {
  f.read(r, TRACKER | OPS, MODEL | OPS);
  return { model_name: f.model, tenant_id: f.tenantOrDefault(), ops: f.ops!, partitionField: f.tenantField };
});

/** `POST /add`. */
export const fastAddBody = fast<Infer<typeof addBody>>((r, f) => {
  f.read(r, TRACKER | REQUEST_ID | ADD_ONLY, MODEL | REQUEST_ID | WORKER_ID | DP_RANK | HASHES);
  return { model_name: f.model, tenant_id: f.tenantOrDefault(), ...addOf(f), partitionField: f.tenantField };
});

/** `POST /prefill_complete` and `POST /free`. */
export const fastRequestIdBody = fast<Infer<typeof requestIdBody>>((r, f) => {
  f.read(r, TRACKER | REQUEST_ID, MODEL | REQUEST_ID);
  return {
    model_name: f.model,
    tenant_id: f.tenantOrDefault(),
    request_id: f.requestId,
    partitionField: f.tenantField,
  };
});

/** A second reader of op maps: the body's own `Fields` is still being filled while ops are read. */
const opFields = new Fields();

function readOps(r: MsgpackReader): WireOp[] {
  const n = r.arrayHeader("ops");
  if (n > MAX_BATCH_OPS) throw DECLINE;
  r.need(n, "ops");
  const ops: WireOp[] = new Array(n);
  for (let i = 0; i < n; i++) ops[i] = readOp(r, opFields);
  return ops;
}

function readOp(r: MsgpackReader, f: Fields): WireOp {
  f.read(r, OP | REQUEST_ID | ADD_ONLY, OP | REQUEST_ID);
  const tag = f.tag;
  if (tag === "prefill_complete" || tag === "free") {
    // Fields of an add on another op are ignored by the general path; they are rare enough to leave it.
    if ((f.seen & ADD_ONLY) !== 0) throw DECLINE;
    return { request_id: f.requestId, op: tag };
  }
  if (tag !== "add" || (f.seen & (WORKER_ID | DP_RANK | HASHES)) !== (WORKER_ID | DP_RANK | HASHES)) {
    throw DECLINE;
  }
  // As the general path builds it: the add's fields, then the tag.
  const op = addOf(f) as WireOp;
  op.op = "add";
  return op;
}

/** An add's own fields, as the general path gives them (every field, defaults filled in). */
function addOf(f: Fields) {
  return {
    request_id: f.requestId,
    worker_id: f.workerId,
    dp_rank: f.dpRank,
    sequence_hashes: f.hashes!,
    new_isl_tokens: f.isl ?? 0,
    expected_output_tokens: f.output,
    expected_prefill_duration_ms: f.duration,
    owner: f.owner,
  };
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
