/**
 * The MessagePack fast path of the lifecycle bodies (`/batch`, `/add`, `/prefill_complete` and
 * `/free`) against the general path (decoder + schema): a plain valid body is taken by the fast path
 * and decoded exactly as the general path decodes it, and a body the fast path takes is never one
 * the general path refuses or reads differently.
 */
import { encode } from "@msgpack/msgpack";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeBody, type FastMsgpack } from "../../src/wire/body";
import { fastAddBody, fastBatchBody, fastRequestIdBody } from "../../src/wire/msgpack-bodies";
import { addBody, batchBody, requestIdBody } from "../../src/schema/requests";
import type { Schema } from "../../src/schema/schema";

const U64_MAX = 2n ** 64n - 1n;
const MSGPACK = { useBigInt64: true } as const;

/** The general path's reading of `bytes` (by default as a `/batch` body), or the error it answers. */
function general(
  bytes: Uint8Array,
  schema: Schema<unknown> = batchBody,
): { body: unknown } | { error: string } {
  try {
    return { body: schema.parse(decodeBody(bytes, "msgpack"), "") };
  } catch (err) {
    return { error: String(err) };
  }
}

/** An object's entries in a shuffled order (keys are encoded in insertion order). */
function shuffled(entries: [string, unknown][], order: number[]): Record<string, unknown> {
  const keyed = entries.map((e, i) => [order[i % order.length]! * 100 + i, e] as const);
  keyed.sort((a, b) => a[0] - b[0]);
  return Object.fromEntries(keyed.map(([, e]) => e));
}

const id = fc.string({ unit: "grapheme", minLength: 1, maxLength: 24 });
/**
 * Integers beyond 32 bits as bigint: with `useBigInt64` the encoder writes a large *number* as a
 * float64, a form the fast path leaves to the general one (tested below).
 */
const hash = fc.oneof(
  fc.bigInt({ min: -(2n ** 63n), max: U64_MAX }),
  fc.integer({ min: -(2 ** 31), max: 2 ** 32 - 1 }),
  fc.constantFrom(0, -1, 127, 128, 2n ** 53n - 1n, U64_MAX, -(2n ** 63n)),
);
const safeNat = fc.oneof(fc.nat(), fc.maxSafeNat().map(BigInt));
const order = fc.array(fc.nat({ max: 9 }), { minLength: 1, maxLength: 8 });
/** An optional field: absent, nil, or a value. */
const opt = <T>(a: fc.Arbitrary<T>) => fc.option(fc.option(a, { nil: null }), { nil: undefined });

const addFields = {
  request_id: id,
  worker_id: fc.oneof(fc.bigInt({ min: 0n, max: U64_MAX }), fc.nat()),
  dp_rank: fc.nat({ max: 2 ** 32 - 1 }),
  sequence_hashes: fc.array(hash, { maxLength: 70 }),
  new_isl_tokens: opt(safeNat),
  expected_output_tokens: opt(fc.nat({ max: 2 ** 32 - 1 })),
  expected_prefill_duration_ms: opt(fc.oneof(fc.double({ min: 0, max: 1e9, noNaN: true }), fc.nat())),
  owner: opt(id),
};
const present = (fields: Record<string, unknown>) =>
  Object.entries(fields).filter(([, v]) => v !== undefined) as [string, unknown][];

const addOp = fc
  .record({ ...addFields, order })
  .map(({ order: o, ...fields }) => shuffled([["op", "add"], ...present(fields)], o));
const idOp = fc
  .record({ op: fc.constantFrom("prefill_complete", "free"), request_id: id, order })
  .map(({ order: o, ...fields }) => shuffled(Object.entries(fields), o));

/** A body: the tracker's fields (the tenant in either spelling, nil or absent) and `rest`. */
function bodyOf(rest: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .record({
      model_name: id,
      tenant: fc.option(
        fc.tuple(fc.constantFrom("tenant_id", "routing_group"), fc.option(id, { nil: null })),
      ),
      ...rest,
      order,
    })
    .map(({ order: o, tenant, ...fields }) =>
      shuffled([...present(fields), ...(tenant ? [tenant as [string, unknown]] : [])], o as number[]),
    );
}

const body = bodyOf({ ops: fc.array(fc.oneof(addOp, idOp), { maxLength: 12 }) });

const BODIES: [string, fc.Arbitrary<Record<string, unknown>>, Schema<unknown>, FastMsgpack<unknown>][] = [
  ["/batch", body, batchBody, fastBatchBody],
  ["/add", bodyOf(addFields), addBody, fastAddBody],
  ["/free", bodyOf({ request_id: id }), requestIdBody, fastRequestIdBody],
];

/** `value` encoded, then edited at a few places (set, insert or delete a byte). */
function mutated(value: unknown, edits: [number, number, string][]): Uint8Array {
  const bytes = [...encode(value, MSGPACK)];
  for (const [at, byte, kind] of edits) {
    const i = at % (bytes.length + 1);
    if (kind === "set" && i < bytes.length) bytes[i] = byte;
    else if (kind === "insert") bytes.splice(i, 0, byte);
    else bytes.splice(i, 1);
  }
  return Uint8Array.from(bytes);
}
const edits = fc.array(
  fc.tuple(fc.nat(), fc.nat({ max: 255 }), fc.constantFrom("set", "set", "insert", "delete")),
  { minLength: 1, maxLength: 3 },
);

describe.each(BODIES)("POST %s MessagePack fast path", (_route, arbitrary, schema, fast) => {
  it("takes every plain valid body and decodes it exactly as the general path", () => {
    fc.assert(
      fc.property(arbitrary, (value) => {
        const bytes = encode(value, MSGPACK);
        const body = fast(bytes);
        expect(body).not.toBeNull();
        expect(general(bytes, schema)).toEqual({ body });
      }),
      { numRuns: 400 },
    );
  });

  it("never takes a body the general path refuses or reads otherwise (mutated bytes)", () => {
    let taken = 0;
    fc.assert(
      fc.property(arbitrary, edits, (value, at) => {
        const bytes = mutated(value, at);
        const body = fast(bytes);
        if (body === null) return;
        taken++;
        expect(general(bytes, schema)).toEqual({ body });
      }),
      // A fixed seed: how many mutated bodies stay valid is then a fact of the test, not of luck.
      { numRuns: 3000, seed: 20261130 },
    );
    // Some mutations keep the body valid (a changed id byte, a changed rank): the check above ran.
    expect(taken).toBeGreaterThan(40);
  });
});

describe("POST /batch MessagePack fast path, by example", () => {
  it("leaves the uncommon forms to the general path, which still accepts them", () => {
    const op = { op: "add", request_id: "r", worker_id: 1, dp_rank: 0, sequence_hashes: [1] };
    const cases: Uint8Array[] = [
      // Both spellings of the tenant, agreeing.
      { model_name: "m", tenant_id: "t", routing_group: "t", ops: [op] },
      // A key the API does not know (ignored, as serde does).
      { model_name: "m", ops: [op], note: "x" },
      { model_name: "m", ops: [{ ...op, extra: [1, 2] }] },
      // An add's field on a free.
      { model_name: "m", ops: [{ op: "free", request_id: "r", worker_id: 1 }] },
      // A request id led by a byte order mark.
      { model_name: "m", ops: [{ ...op, request_id: `\ufeff${"x".repeat(300)}` }] },
    ].map((value) => encode(value, MSGPACK));
    // An integral float64 where an integer goes: the rank 0.5 encoded, its bits replaced by 3.0's.
    const half = encode({ model_name: "m", ops: [{ ...op, dp_rank: 0.5 }] }, MSGPACK);
    const at = Buffer.from(half).indexOf(Buffer.from([0xcb, 0x3f, 0xe0]));
    half.set([0xcb, 0x40, 0x08], at);
    cases.push(half);
    for (const bytes of cases) {
      expect(fastBatchBody(bytes)).toBeNull();
      expect(general(bytes)).toHaveProperty("body");
    }
    expect(general(half)).toMatchObject({ body: { ops: [{ dp_rank: 3 }] } });
  });

  it("declines what the general path refuses, so the error is worded there", () => {
    const op = { op: "add", request_id: "r", worker_id: 1, dp_rank: 0, sequence_hashes: [1] };
    const refused: Record<string, unknown>[] = [
      { ops: [op] },
      { model_name: "", ops: [op] },
      { model_name: "m", ops: [{ ...op, request_id: "" }] },
      { model_name: "m", ops: [{ ...op, worker_id: -1 }] },
      { model_name: "m", ops: [{ ...op, op: "route" }] },
      { model_name: "m", ops: [{ ...op, expected_prefill_duration_ms: -1 }] },
      { model_name: "m", tenant_id: "a", routing_group: "b", ops: [op] },
      { model_name: "m", ops: [{ ...op, sequence_hashes: [1.5] }] },
    ];
    for (const value of refused) {
      const bytes = encode(value, MSGPACK);
      expect(fastBatchBody(bytes), JSON.stringify(value)).toBeNull();
      expect(general(bytes)).toHaveProperty("error");
    }
    // A key given twice (the encoder cannot write one: spliced by hand).
    const twice = encode({ model_name: "m", ops: [] }, MSGPACK);
    const dup = Uint8Array.from([0x83, ...twice.subarray(1), ...encode("model_name"), ...encode("n")]);
    expect(fastBatchBody(dup)).toBeNull();
    expect(general(dup)).toHaveProperty("error");
  });
});
