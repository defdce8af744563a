/**
 * Bytes for the fuzz test's operations. A body is an ordered list of fields, each a plain value, raw
 * JSON text with its MessagePack counterpart, or a string whose bytes are not UTF-8, so one encoder
 * per format can write what `JSON.stringify` and `@msgpack/msgpack` never would (repeated keys,
 * invalid UTF-8, 100,000 levels of nesting, integers past 64 bits) with every other field intact.
 */
import { encode } from "@msgpack/msgpack";
import { MAX_BODY_BYTES, MAX_HASHES_PER_CALL } from "../../durable-objects/limits";
import { type BatchSub, type BodyOp, type Encoding, type Mutation, U64_MAX, type ValidOp } from "./fuzz-ops";
import { toJson } from "./reliability-http";

type Value = { js: unknown } | { json: string; msgpack: Uint8Array } | { notUtf8: true };
type Field = [string, Value];

export interface WireRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: BodyInit | null;
}

const utf8 = new TextEncoder();
const packed = (v: unknown) => encode(v, { useBigInt64: true });
const js = (v: unknown): Value => ({ js: v });

function hashesOf(hashes: bigint[], signed: boolean): bigint[] {
  // The same 64 bits written as i64 when they exceed it: -1 ≡ 2^64 − 1.
  return hashes.map((h) => (signed && h >= 2n ** 63n ? h - U64_MAX - 1n : h));
}

function subWire(sub: BatchSub): object {
  if (sub.op !== "add") return { op: sub.op, request_id: sub.id };
  const { id, workerId, rank, hashes, tokens, owner } = sub.args;
  return {
    op: "add",
    request_id: id,
    worker_id: workerId,
    dp_rank: rank,
    sequence_hashes: hashes,
    new_isl_tokens: tokens,
    ...(owner !== undefined && { owner }),
  };
}

/** The route and body fields of a valid op, for the tracker of `model`. */
export function validFields(op: ValidOp, model: string): { path: string; fields: Field[] } {
  const m: Field = ["model_name", js(model)];
  const f = (entries: Record<string, unknown>): Field[] => [
    m,
    ...Object.entries(entries).map(([k, v]): Field => [k, js(v)]),
  ];
  switch (op.kind) {
    case "register": {
      const w = op.worker;
      return {
        path: "/register",
        fields: f({ worker_id: w.workerId, block_size: w.blockSize, dp_start: w.dpStart, dp_size: w.dpSize }),
      };
    }
    case "unregister":
      return { path: "/unregister", fields: f({ worker_id: op.workerId, routing_group: "default" }) };
    case "add": {
      const a = op.args;
      return {
        path: "/add",
        fields: f({
          request_id: a.id,
          worker_id: a.workerId,
          dp_rank: a.rank,
          sequence_hashes: hashesOf(a.hashes, op.signed),
          new_isl_tokens: a.tokens,
          tenant_id: "default",
          ...(a.owner !== undefined && { owner: a.owner }),
        }),
      };
    }
    case "prefill_complete":
    case "free":
      return { path: `/${op.kind}`, fields: f({ request_id: op.id }) };
    case "potential_loads":
      return {
        path: "/potential_loads",
        fields: f({ sequence_hashes: op.hashes, new_isl_tokens: op.tokens }),
      };
    case "route":
      return {
        path: "/route",
        fields: f({
          request_id: op.id,
          sequence_hashes: op.hashes,
          new_isl_tokens: op.tokens,
          ...(op.owner !== undefined && { owner: op.owner }),
        }),
      };
    case "batch":
      return { path: "/batch", fields: f({ ops: op.ops.map(subWire) }) };
    case "lease":
      return { path: "/leases", fields: f({ owner: op.owner, ttl_ms: op.ttl }) };
    case "end_lease":
      throw new Error("DELETE /leases/{owner} has no body: see validRequest");
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** A quoted string "a<ff fe>b": its bytes are not UTF-8. */
const NOT_UTF8 = [0x61, 0xff, 0xfe, 0x62];

export function encodeFields(fields: Field[], enc: Encoding): Uint8Array {
  if (enc === "json") {
    const chunks: Uint8Array[] = [utf8.encode("{")];
    fields.forEach(([key, value], i) => {
      chunks.push(utf8.encode(`${i > 0 ? "," : ""}${JSON.stringify(key)}:`));
      if ("notUtf8" in value) chunks.push(Uint8Array.from([0x22, ...NOT_UTF8, 0x22]));
      else chunks.push(utf8.encode("json" in value ? value.json : toJson(value.js)));
    });
    chunks.push(utf8.encode("}"));
    return concat(chunks);
  }
  const n = fields.length;
  const header = n < 16 ? Uint8Array.of(0x80 | n) : Uint8Array.of(0xde, n >> 8, n & 0xff);
  const chunks: Uint8Array[] = [header];
  for (const [key, value] of fields) {
    chunks.push(packed(key));
    if ("notUtf8" in value) chunks.push(Uint8Array.from([0xa0 | NOT_UTF8.length, ...NOT_UTF8]));
    else chunks.push("msgpack" in value ? value.msgpack : packed(value.js));
  }
  return concat(chunks);
}

const CONTENT_TYPE: Record<Encoding, string> = { json: "application/json", msgpack: "application/msgpack" };

/** A valid op as a request. */
export function validRequest(op: ValidOp, model: string, accept: Encoding): WireRequest {
  if (op.kind === "end_lease") {
    const query = new URLSearchParams({ model_name: model, tenant_id: "default" });
    return {
      method: "DELETE",
      path: `/leases/${encodeURIComponent(op.owner)}?${query}`,
      headers: { accept: CONTENT_TYPE[accept] },
      body: null,
    };
  }
  const { path, fields } = validFields(op, model);
  return {
    method: "POST",
    path,
    headers: { "content-type": CONTENT_TYPE[op.enc], accept: CONTENT_TYPE[accept] },
    body: encodeFields(fields, op.enc),
  };
}

function deep(depth: number): Value {
  const msgpack = new Uint8Array(depth + 1).fill(0x91);
  msgpack[depth] = 0x01;
  return { json: `${"[".repeat(depth)}1${"]".repeat(depth)}`, msgpack };
}

function withField(fields: Field[], field: string, value: Value): Field[] {
  const at = fields.findIndex(([k]) => k === field);
  if (at < 0) return [...fields, [field, value]];
  return fields.map((entry, i): Field => (i === at ? [field, value] : entry));
}

/**
 * A valid op's request with `mutation` applied, and the status it must get: a number, or 0 for "some
 * 4xx" where two rules may both apply first.
 */
export function hostileRequest(base: BodyOp, mutation: Mutation, model: string, accept: Encoding) {
  const request = validRequest(base, model, accept);
  const { fields } = validFields(base, model);
  const enc = base.enc;
  const body = (f: Field[]) => encodeFields(f, enc);
  let expected = 422;
  switch (mutation.m) {
    case "delete":
      request.body = body(fields.filter(([k]) => k !== mutation.field));
      break;
    case "null":
      request.body = body(withField(fields, mutation.field, js(null)));
      break;
    case "set": {
      const bad = mutation.bad;
      let value: Value;
      if (bad.t === "value") value = js(bad.v);
      else if (bad.t === "raw") value = { json: bad.json, msgpack: packed(bad.msgpack) };
      else if (bad.t === "long") value = js(bad.unit.repeat(bad.count));
      else if (bad.t === "deep") value = deep(bad.depth);
      else value = { notUtf8: true };
      if (bad.t === "notUtf8") expected = 400;
      request.body = body(withField(fields, mutation.field, value));
      break;
    }
    case "deep":
      // The object is one level: JSON refuses nesting past 64 levels as malformed.
      expected = enc === "json" && mutation.depth + 1 > 64 ? 400 : 422;
      request.body = body(withField(fields, mutation.field, deep(mutation.depth)));
      break;
    case "duplicate": {
      // A field the body lacks would not be a repeat (and a new `tenant_id` names another tracker).
      const field = fields.some(([k]) => k === mutation.field) ? mutation.field : "model_name";
      const value = fields.find(([k]) => k === field)![1];
      request.body = body([[field, value], ...fields]);
      expected = 400;
      break;
    }
    case "alias":
      request.body = body([
        ...withField(
          fields.filter(([k]) => k !== "routing_group"),
          "tenant_id",
          js("default"),
        ),
        ["routing_group", js(mutation.tenant)],
      ]);
      expected = mutation.tenant === "other" ? 400 : 422;
      break;
    case "truncate": {
      const bytes = body(fields);
      request.body = bytes.slice(0, Math.floor(mutation.keep * bytes.length));
      expected = 400;
      break;
    }
    case "trailing":
      request.body = concat([body(fields), utf8.encode(mutation.junk)]);
      expected = 400;
      break;
    case "empty":
      request.body = new Uint8Array(0);
      expected = 400;
      break;
    case "notObject":
      request.body = enc === "json" ? toJson(mutation.value) : packed(mutation.value);
      break;
    case "contentType":
      if (mutation.type === null) delete request.headers["content-type"];
      else request.headers["content-type"] = mutation.type;
      expected = 415;
      break;
    case "oversize": {
      const huge = new Uint8Array(MAX_BODY_BYTES + 1).fill(0x20);
      request.body = mutation.streamed
        ? new ReadableStream({
            start(controller) {
              for (let at = 0; at < huge.length; at += 65_536)
                controller.enqueue(huge.subarray(at, at + 65_536));
              controller.close();
            },
          })
        : huge;
      expected = 413;
      break;
    }
    case "replica":
      request.headers["x-slot-tracker-replica"] = mutation.name;
      expected = 400;
      break;
    case "seed":
      request.headers["x-slot-tracker-seed"] = mutation.value;
      expected = 400;
      break;
    case "tooManyHashes": {
      const many = Array.from({ length: MAX_HASHES_PER_CALL + 1 }, (_, i) => i % 100);
      request.body = body(withField(fields, "sequence_hashes", js(many)));
      expected = 413;
      break;
    }
  }
  return { request, expected };
}
