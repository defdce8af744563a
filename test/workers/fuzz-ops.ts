/**
 * The fuzz test's operations: valid ones drawn from small alphabets (so they collide: same ids, same
 * workers, shared prefixes, ids and ranks at their limits), and hostile ones made from a valid body
 * by exactly one mutation that must make it unacceptable. Each op is plain data, so fast-check
 * prints a failing sequence readably; `fuzz-wire.ts` turns it into bytes.
 */
import fc from "fast-check";
import type { AddArgs, ModelWorker } from "./fuzz-model";

export type Encoding = "json" | "msgpack";
export const U64_MAX = 2n ** 64n - 1n;

const WORKER_IDS = [1n, 7n, 2n ** 53n + 1n, U64_MAX];
const REQUEST_IDS = ["a", "b", "c", "é€😀", "x".repeat(504)];
const HASHES = [0n, 1n, 2n, 3n, 2n ** 63n, U64_MAX];
/** Lease owners: one at the 256-byte limit, one with a slash, a space and a non-ASCII letter. */
export const OWNERS = ["fe-1", "é/fe 2", "o".repeat(256)];
/** Lease ttls, all longer than the fuzz test may run, so that no lease lapses during it. */
const TTLS = [300_000n, 450_000n, 600_000n];

const workerId = fc.constantFrom(...WORKER_IDS);
const requestId = fc.constantFrom(...REQUEST_IDS);
const prompt = fc.array(fc.constantFrom(...HASHES), { maxLength: 6 });
const tokens = fc.constantFrom(0n, 1n, 5n, 1000n);
const encoding = fc.constantFrom<Encoding>("json", "json", "msgpack");
const owner = fc.constantFrom(...OWNERS);
/** Most bookings are unowned, as most of the suite's are. */
const maybeOwner = fc.option(owner, { nil: undefined, freq: 2 });

export type ValidOp =
  | { kind: "register"; worker: ModelWorker; enc: Encoding }
  | { kind: "unregister"; workerId: bigint; enc: Encoding }
  | { kind: "add"; args: AddArgs; enc: Encoding; signed: boolean }
  | { kind: "prefill_complete" | "free"; id: string; enc: Encoding }
  | { kind: "potential_loads"; hashes: bigint[]; tokens: bigint; enc: Encoding }
  | { kind: "route"; id: string; hashes: bigint[]; tokens: bigint; owner?: string; enc: Encoding }
  | { kind: "batch"; ops: BatchSub[]; enc: Encoding }
  | { kind: "lease"; owner: string; ttl: bigint; enc: Encoding }
  | { kind: "end_lease"; owner: string };

/** The operations with a body, which hostile requests are made from. */
export type BodyOp = Exclude<ValidOp, { kind: "end_lease" }>;

export type BatchSub = { op: "add"; args: AddArgs } | { op: "prefill_complete" | "free"; id: string };

const registerOp = fc.record({
  kind: fc.constant("register" as const),
  worker: fc.record({
    workerId,
    blockSize: fc.constantFrom(16n, 16n, 16n, 32n, 0n),
    dpStart: fc.constantFrom(0n, 3n, 2n ** 32n - 3n, 2n ** 32n - 1n),
    dpSize: fc.constantFrom(1n, 2n, 2n, 0n),
  }),
  enc: encoding,
});

const addArgs = fc.record({
  id: requestId,
  workerId,
  rank: fc.constantFrom(0n, 1n, 3n, 4n, 5n, 2n ** 32n - 3n, 2n ** 32n - 2n),
  hashes: prompt,
  tokens,
  owner: maybeOwner,
});

const batchSub: fc.Arbitrary<BatchSub> = fc.oneof(
  fc.record({ op: fc.constant("add" as const), args: addArgs }),
  fc.record({ op: fc.constantFrom("prefill_complete" as const, "free" as const), id: requestId }),
);

/** Valid operations with a body (every one but `DELETE /leases/{owner}`): what hostile ones break. */
export const bodyOp: fc.Arbitrary<BodyOp> = fc.oneof(
  { weight: 3, arbitrary: registerOp },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("unregister" as const), workerId, enc: encoding }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("add" as const),
      args: addArgs,
      enc: encoding,
      signed: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constantFrom("prefill_complete" as const, "free" as const),
      id: requestId,
      enc: encoding,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("potential_loads" as const),
      hashes: prompt,
      tokens,
      enc: encoding,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("route" as const),
      id: requestId,
      hashes: prompt,
      tokens,
      owner: maybeOwner,
      enc: encoding,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("batch" as const),
      ops: fc.array(batchSub, { minLength: 1, maxLength: 4 }),
      enc: encoding,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("lease" as const),
      owner,
      ttl: fc.constantFrom(...TTLS),
      enc: encoding,
    }),
  },
);

export const validOp: fc.Arbitrary<ValidOp> = fc.oneof(
  { weight: 14, arbitrary: bodyOp },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("end_lease" as const), owner }) },
);

/** A value that no field of its kind accepts, described as data: `raw` is JSON text, `bytes` a UTF-8 hole. */
export type Bad =
  | { t: "value"; v: unknown }
  | { t: "raw"; json: string; msgpack: unknown }
  | { t: "deep"; depth: number }
  | { t: "long"; unit: string; count: number }
  | { t: "notUtf8" };

const U64_BAD: Bad[] = [
  { t: "value", v: "1" },
  { t: "value", v: -1 },
  { t: "value", v: true },
  { t: "value", v: [] },
  { t: "value", v: {} },
  { t: "raw", json: "18446744073709551616", msgpack: 1.8446744073709552e19 },
  { t: "raw", json: "-9223372036854775809", msgpack: -9.3e18 },
  { t: "raw", json: "100000000000000000000000000000000000000000", msgpack: 1e41 },
  { t: "raw", json: "1.5", msgpack: 1.5 },
  { t: "raw", json: "5.0", msgpack: 0.5 },
  { t: "raw", json: "1e3", msgpack: Number.POSITIVE_INFINITY },
  { t: "raw", json: "-0.0", msgpack: Number.NaN },
];
const U32_BAD: Bad[] = [...U64_BAD, { t: "value", v: 2 ** 32 }];
const UINT_BAD: Bad[] = [...U64_BAD, { t: "raw", json: "9007199254740992", msgpack: 2 ** 53 }];
const STRING_BAD: Bad[] = [
  { t: "value", v: 123 },
  { t: "value", v: "" },
  { t: "value", v: false },
  { t: "value", v: ["a"] },
  { t: "value", v: { a: 1 } },
  { t: "notUtf8" },
];
const OWNER_BAD = STRING_BAD;
const TTL_BAD: Bad[] = [
  ...UINT_BAD,
  { t: "value", v: 0 },
  { t: "value", v: 999 },
  { t: "value", v: 600_001 },
  { t: "raw", json: "1000.5", msgpack: 1000.5 },
];
const HASHES_BAD: Bad[] = [
  { t: "value", v: "1,2" },
  { t: "value", v: { 0: 1 } },
  { t: "value", v: [1, "2"] },
  { t: "value", v: [null] },
  { t: "value", v: [[1]] },
  { t: "raw", json: "[1,18446744073709551616]", msgpack: [1, 1.8446744073709552e19] },
  { t: "raw", json: "[-9223372036854775809]", msgpack: [-9.3e18] },
  { t: "raw", json: "[1.5]", msgpack: [1.5] },
  { t: "raw", json: "[2e0]", msgpack: [0.25] },
];
const OPS_BAD: Bad[] = [
  { t: "value", v: "add" },
  { t: "value", v: { op: "add" } },
  { t: "value", v: [1] },
  { t: "value", v: [{ op: "delete", request_id: "a" }] },
  { t: "value", v: [{ op: "free" }] },
  { t: "value", v: [{ request_id: "a" }] },
  {
    t: "value",
    v: [{ op: "add", request_id: "a", worker_id: 1, dp_rank: 0, sequence_hashes: [], owner: "" }],
  },
  {
    t: "value",
    v: [{ op: "add", request_id: "a", worker_id: 1, dp_rank: 0, sequence_hashes: [], owner: 7 }],
  },
];

type Kind = "u64" | "u32" | "uint" | "name" | "id" | "hashes" | "ops" | "owner" | "ttl";
/** Each route's fields: kind, and whether a missing or null value is refused. */
export const FIELDS: Record<string, Record<string, [Kind, boolean]>> = {
  "/register": {
    worker_id: ["u64", true],
    model_name: ["name", true],
    tenant_id: ["name", false],
    block_size: ["u32", true],
    dp_start: ["u32", true],
    dp_size: ["u32", true],
  },
  "/unregister": { worker_id: ["u64", true], model_name: ["name", true], tenant_id: ["name", false] },
  "/add": {
    model_name: ["name", true],
    tenant_id: ["name", false],
    request_id: ["id", true],
    worker_id: ["u64", true],
    dp_rank: ["u32", true],
    sequence_hashes: ["hashes", true],
    new_isl_tokens: ["uint", false],
    owner: ["owner", false],
  },
  "/prefill_complete": { model_name: ["name", true], tenant_id: ["name", false], request_id: ["id", true] },
  "/free": { model_name: ["name", true], tenant_id: ["name", false], request_id: ["id", true] },
  "/potential_loads": {
    model_name: ["name", true],
    tenant_id: ["name", false],
    sequence_hashes: ["hashes", true],
    new_isl_tokens: ["uint", false],
  },
  "/route": {
    model_name: ["name", true],
    tenant_id: ["name", false],
    request_id: ["id", true],
    sequence_hashes: ["hashes", true],
    new_isl_tokens: ["uint", false],
    owner: ["owner", false],
  },
  "/batch": { model_name: ["name", true], tenant_id: ["name", false], ops: ["ops", true] },
  "/leases": {
    model_name: ["name", true],
    tenant_id: ["name", false],
    owner: ["owner", true],
    ttl_ms: ["ttl", true],
  },
};

const BAD_OF: Record<Kind, fc.Arbitrary<Bad>> = {
  u64: fc.constantFrom(...U64_BAD),
  u32: fc.constantFrom(...U32_BAD),
  uint: fc.constantFrom(...UINT_BAD),
  name: fc.oneof(
    fc.constantFrom(...STRING_BAD),
    fc.record({
      t: fc.constant("long" as const),
      unit: fc.constantFrom("m", "é", "€", "😀"),
      count: fc.integer({ min: 257, max: 40_000 }),
    }),
  ),
  id: fc.oneof(
    fc.constantFrom(...STRING_BAD),
    fc.record({
      t: fc.constant("long" as const),
      unit: fc.constantFrom("r", "€"),
      count: fc.integer({ min: 513, max: 40_000 }),
    }),
  ),
  hashes: fc.constantFrom(...HASHES_BAD),
  ops: fc.constantFrom(...OPS_BAD),
  owner: fc.oneof(
    fc.constantFrom(...OWNER_BAD),
    fc.record({
      t: fc.constant("long" as const),
      unit: fc.constantFrom("o", "é", "😀"),
      count: fc.integer({ min: 257, max: 40_000 }),
    }),
  ),
  ttl: fc.constantFrom(...TTL_BAD),
};

/** One change that makes a valid body unacceptable, with the status it must get. */
export type Mutation =
  | { m: "delete"; field: string }
  | { m: "null"; field: string }
  | { m: "set"; field: string; bad: Bad }
  | { m: "deep"; field: string; depth: number }
  | { m: "duplicate"; field: string }
  | { m: "alias"; tenant: string }
  | { m: "truncate"; keep: number }
  | { m: "trailing"; junk: string }
  | { m: "empty" }
  | { m: "notObject"; value: unknown }
  | { m: "contentType"; type: string | null }
  | { m: "oversize"; streamed: boolean }
  | { m: "replica"; name: string }
  | { m: "seed"; value: string }
  | { m: "tooManyHashes" };

/** Mutations that apply to every body of `path`. */
export function mutationOf(path: string): fc.Arbitrary<Mutation> {
  const fields = Object.entries(FIELDS[path]!);
  const required = fields.filter(([, [, req]]) => req).map(([f]) => f);
  const options: fc.Arbitrary<Mutation>[] = [
    fc.record({ m: fc.constant("delete" as const), field: fc.constantFrom(...required) }),
    fc.record({ m: fc.constant("null" as const), field: fc.constantFrom(...required) }),
    fc.oneof(
      ...fields.map(([field, [kind]]) =>
        fc.record({ m: fc.constant("set" as const), field: fc.constant(field), bad: BAD_OF[kind] }),
      ),
    ),
    fc.record({
      m: fc.constant("deep" as const),
      field: fc.constantFrom(...fields.map(([f]) => f)),
      depth: fc.constantFrom(2, 64, 65, 1000, 100_000),
    }),
    fc.record({ m: fc.constant("duplicate" as const), field: fc.constantFrom(...fields.map(([f]) => f)) }),
    fc.record({ m: fc.constant("alias" as const), tenant: fc.constantFrom("other", "x".repeat(300), "") }),
    fc.record({ m: fc.constant("truncate" as const), keep: fc.double({ min: 0, max: 0.999, noNaN: true }) }),
    fc.record({ m: fc.constant("trailing" as const), junk: fc.constantFrom("x", "{}", " 1", "\u0000", "]") }),
    fc.constant({ m: "empty" as const }),
    fc.record({
      m: fc.constant("notObject" as const),
      value: fc.constantFrom<unknown>([], [1], "add", 7, null, true),
    }),
    fc.record({
      m: fc.constant("contentType" as const),
      type: fc.constantFrom(
        "text/plain",
        "application/xml",
        "multipart/form-data",
        "text/json",
        "application/msgpac",
        null,
      ),
    }),
    fc.record({ m: fc.constant("oversize" as const), streamed: fc.boolean() }),
    fc.record({ m: fc.constant("replica" as const), name: fc.constantFrom("mars", "east", "PRIMARY") }),
  ];
  if (path === "/route")
    options.push(
      fc.record({
        m: fc.constant("seed" as const),
        value: fc.constantFrom("x", "-1", "4294967296", "1.5", ""),
      }),
    );
  if ("sequence_hashes" in FIELDS[path]!) options.push(fc.constant({ m: "tooManyHashes" as const }));
  return fc.oneof(...options);
}

export const POST_ROUTES = Object.keys(FIELDS);
