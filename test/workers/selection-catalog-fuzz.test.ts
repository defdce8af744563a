/**
 * Hostile input on the selection catalog's routes, in workerd: fast-check sequences that interleave
 * valid catalog calls (POST, PATCH, DELETE, in JSON and MessagePack, their statuses and records
 * predicted by `CatalogModel`) with refused ones — a valid body broken by one mutation, bytes that are
 * no body, a wrong content type, a path id that is no u64. Every refused call must get a 4xx with an
 * `error` string, never a 5xx, and leave the catalog listing, `/workers` and `/loads` of every group
 * as they were; at the end the catalog holds exactly the model's ids, each in its group.
 */
import { decode, encode } from "@msgpack/msgpack";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseExact } from "./api-http";
import { uniquePartition } from "./booking-http";
import { type Answer, send, toJson } from "./reliability-http";
import {
  CatalogModel,
  type Fields,
  GROUPS,
  idsOf,
  normal,
  pathId,
  TRACKED,
  type Valid,
  valid,
} from "./selection-catalog-fuzz-model";

/** Sequences per run: about 30 s on a loaded 2-core machine. */
const RUNS = 40;
const TIMEOUT_MS = 300_000;
/**
 * Shrinking replays whole sequences against workerd and can outlast the timeout: past this it stops
 * and reports the smallest counterexample found so far, instead of a bare timeout.
 */
const SHRINK_LIMIT_MS = 200_000;
const MSGPACK = "application/msgpack";
const OPTIONS = { useBigInt64: true } as const;

/** Replacements that no catalog write accepts for the field (a POST's `null` only where serde refuses it). */
const BAD: Record<string, unknown[]> = {
  endpoint: [7, "x".repeat(2049), "é".repeat(1025), [], true],
  kv_events_endpoint: [3, {}],
  replay_endpoint: [false],
  block_size: [-1, 2 ** 32, 4.5, "4", true, [4]],
  data_parallel_start_rank: [-1, 2 ** 32, 0.5, "0"],
  data_parallel_size: [-1, 2 ** 32, 1.5, {}],
  max_num_batched_tokens: [-1, 2n ** 64n, 2 ** 64, 1.5, "8192"],
  total_kv_blocks: [-1, 2n ** 64n, 0.25, false],
  stable_routing_id: [5, "s".repeat(2049)],
  is_eagle: ["true", 1, 0, []],
  taints: ["gpu", [1], [null], ["x".repeat(2049)], {}],
  topology_domains: [[], { rack: 1 }, "r"],
  kv_events_endpoints: [{ x: "tcp://a" }, { "-1": "tcp://a" }, { "4294967296": "a" }, { "1.5": "a" }, ["a"]],
  kv_transfer_domain: [1],
  kv_transfer_enforcement: ["strict", "Required", "", 1, ["required"]],
  kv_transfer_preferred_weight: ["x", 1e39, true, [0.5]],
  router_hint_worker_type: [false],
  router_hint_source_control_endpoints: [{ "0": 5 }],
  kv_event_source_mode: [1],
};
const BAD_POST: Record<string, unknown[]> = {
  ...BAD,
  worker_id: [-1, 1.5, "7", 2n ** 64n, 2 ** 64, null, true, [1], {}],
  model_name: [5, "", null, "m".repeat(257), "é".repeat(129), []],
  routing_group: [7, "", null, `${GROUPS[1]}x`, false],
  taints: [...BAD.taints!, null],
  topology_domains: [...BAD.topology_domains!, null],
  kv_events_endpoints: [...BAD.kv_events_endpoints!, null],
};
/**
 * Writes the body's types allow but the tracker refuses: text fields within their bounds whose sum
 * passes a record's 16,384 bytes (413), and a complete record of more ranks than a tracker holds (429).
 */
const LIMITS = {
  size: { taints: Array.from({ length: 9 }, (_, i) => `${i}${"t".repeat(2000)}`) },
  ranks: {
    endpoint: "http://w:8000",
    block_size: 4,
    is_eagle: false,
    data_parallel_start_rank: 0,
    data_parallel_size: 70_000,
  },
} satisfies Record<string, Fields>;
type Limit = keyof typeof LIMITS;

type Broken = "duplicate" | "trailing" | "truncated";
type Mutation =
  | { field: string; value: unknown }
  | { drop: string }
  | { limit: Limit }
  | { text: Broken }
  | { bytes: Uint8Array; type?: string }
  | { type: string }
  | { path: string };

interface Hostile {
  kind: "hostile";
  base: Valid;
  mutation: Mutation;
}

const BAD_IDS = [
  "abc",
  "-1",
  "18446744073709551616",
  "99999999999999999999",
  "1.5",
  "0x10",
  "++1",
  "%207",
  "1e3",
];

/** Bytes that do not decode to an object in `type`: an empty PATCH body would be valid. */
function isNoObject(bytes: Uint8Array, type: string): boolean {
  try {
    const value = type === MSGPACK ? decode(bytes) : JSON.parse(new TextDecoder().decode(bytes));
    return value === null || typeof value !== "object" || Array.isArray(value);
  } catch {
    return true;
  }
}

const garbage = fc
  .record({
    bytes: fc.oneof(fc.uint8Array({ maxLength: 60 }), fc.constant(new TextEncoder().encode("{"))),
    type: fc.constantFrom("application/json", MSGPACK),
  })
  .filter(({ bytes, type }) => isNoObject(bytes, type));

const hostile: fc.Arbitrary<Hostile> = valid.chain((base) => {
  const mutations: fc.WeightedArbitrary<Mutation>[] = [];
  const add = (arbitrary: fc.Arbitrary<Mutation>, weight = 1) => mutations.push({ arbitrary, weight });
  if (base.kind !== "delete") {
    const bad = base.kind === "post" ? BAD_POST : BAD;
    // Most break one field: the richest source of distinct refusals.
    add(
      fc
        .constantFrom(...Object.keys(bad))
        .chain((field) => fc.record({ field: fc.constant(field), value: fc.constantFrom(...bad[field]!) })),
      8,
    );
    add(fc.record({ limit: fc.constantFrom<Limit>("size", "ranks") }), 3);
    add(fc.record({ text: fc.constantFrom<Broken>("duplicate", "trailing", "truncated") }));
    add(garbage);
    add(fc.constant({ bytes: new Uint8Array(0) }));
    add(fc.record({ type: fc.constantFrom("text/plain", "application/xml", "multipart/form-data") }));
  }
  if (base.kind !== "post") add(fc.record({ path: fc.constantFrom(...BAD_IDS) }), 2);
  if (base.kind === "post") add(fc.constant({ drop: "worker_id" }));
  return fc.record({
    kind: fc.constant("hostile" as const),
    base: fc.constant(base),
    mutation: fc.oneof(...mutations),
  });
});

/** How a valid call is sent: its body in MessagePack or JSON, its answer asked for in either. */
const encoding = fc.record({ msgpack: fc.boolean(), accept: fc.boolean() });
type Encoding = { msgpack: boolean; accept: boolean };

type Step = { op: Valid | Hostile; encoding: Encoding };
const step: fc.Arbitrary<Step> = fc.record({
  op: fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: hostile, weight: 2 }),
  encoding,
});

function bodyOf(op: Valid, ids: bigint[], model: string): Fields | undefined {
  switch (op.kind) {
    case "post":
      return {
        ...op.fields,
        worker_id: ids[op.slot],
        model_name: model,
        ...(!(op.omitGroup && op.group === 0) && { routing_group: GROUPS[op.group] }),
      };
    case "patch":
      return { ...op.ignored, ...op.fields };
    case "delete":
      return undefined;
  }
}

function methodAndPath(op: Valid, ids: bigint[]): [string, string] {
  if (op.kind === "post") return ["POST", "/selection/workers"];
  return [op.kind === "patch" ? "PATCH" : "DELETE", `/selection/workers/${pathId(ids[op.slot]!, op.form)}`];
}

/** Whether MessagePack can carry the body as it is: a bigint past u64 would wrap, not be refused. */
function msgpackable(value: unknown): boolean {
  if (typeof value === "bigint") return value >= -(2n ** 63n) && value < 2n ** 64n;
  if (Array.isArray(value)) return value.every(msgpackable);
  if (value !== null && typeof value === "object") return Object.values(value).every(msgpackable);
  return true;
}

function request(op: Valid, ids: bigint[], model: string, enc: Encoding, mutation?: Mutation) {
  const [method, path] = methodAndPath(op, ids);
  const headers: Record<string, string> = enc.accept ? { accept: MSGPACK } : {};
  const body = bodyOf(op, ids, model);
  if (mutation && "path" in mutation) {
    const bad = `/selection/workers/${mutation.path}`;
    return send(method, bad, body === undefined ? { headers } : json(body, headers));
  }
  if (mutation && "bytes" in mutation) {
    if (mutation.type !== undefined) headers["content-type"] = mutation.type;
    return send(method, path, { headers, body: mutation.bytes });
  }
  if (body === undefined) return send(method, path, { headers });
  if (mutation && "drop" in mutation) delete body[mutation.drop];
  if (mutation && "field" in mutation) body[mutation.field] = mutation.value;
  if (mutation && "limit" in mutation) Object.assign(body, LIMITS[mutation.limit]);
  if (mutation && "text" in mutation) return send(method, path, json(body, headers, mutation.text));
  if (mutation && "type" in mutation) {
    return send(method, path, { headers: { ...headers, "content-type": mutation.type }, body: toJson(body) });
  }
  if (enc.msgpack && msgpackable(body)) {
    return send(method, path, {
      headers: { ...headers, "content-type": MSGPACK },
      body: encode(body, OPTIONS),
    });
  }
  return send(method, path, json(body, headers));
}

/** A JSON body, or one broken in its text: a field given twice (serde refuses it), trailing or cut off. */
function json(body: Fields, headers: Record<string, string>, broken?: Broken) {
  let text = toJson(body);
  if (broken === "duplicate") {
    const field = "worker_id" in body ? `"worker_id":${toJson(body.worker_id)}` : `"endpoint":"http://a"`;
    text = `{${field},${field}${text === "{}" ? "" : ","}${text.slice(1)}`;
  }
  if (broken === "trailing") text = `${text} {}`;
  if (broken === "truncated") text = text.slice(0, -1);
  return { headers: { ...headers, "content-type": "application/json" }, body: text };
}

/** An answer's body, in whichever encoding it came, integers exact. */
function parsed(answer: Answer): Record<string, unknown> {
  const type = answer.headers.get("content-type");
  if (type === MSGPACK) return decode(answer.bytes, OPTIONS) as Record<string, unknown>;
  expect(type, answer.text).toBe("application/json");
  return parseExact(answer.text) as Record<string, unknown>;
}

/** What a refused call must leave as it was: the model's catalog listing, and each group's tracker. */
async function stateOf(model: string): Promise<string> {
  const parts = [await send("GET", `/selection/workers?${new URLSearchParams({ model_name: model })}`)];
  for (const group of GROUPS) {
    const query = new URLSearchParams({ model_name: model, tenant_id: group });
    parts.push(await send("GET", `/workers?${query}`), await send("GET", `/loads?${query}`));
  }
  for (const part of parts) expect(part.status, part.text).toBe(200);
  return parts.map((part) => part.text).join("\n");
}

function expectRefused(answer: Answer, what: string): void {
  const said = `${what} → ${answer.status} ${answer.text.slice(0, 300)}`;
  expect(answer.status, said).toBeGreaterThanOrEqual(400);
  expect(answer.status, said).toBeLessThan(500);
  const error = parsed(answer).error;
  expect(typeof error === "string" && error.length > 0, said).toBe(true);
}

/** A record as the model holds it: id, group, tracked fields and, where the model can tell, the judgement. */
function expectRecord(record: Record<string, unknown>, want: Expected, what: string): void {
  expect(normal(record.worker_id), what).toBe(want.id);
  expect(record.routing_group, what).toBe(GROUPS[want.held.group]);
  const tracked = Object.fromEntries(TRACKED.map((key) => [key, normal(record[key])]));
  expect(tracked, what).toEqual(normal(want.held.fields));
  const listed = (record.not_schedulable_reasons as string[] | undefined) ?? [];
  if (want.reasons === "final") {
    expect(record.lifecycle, what).toBe("unschedulable");
    expect("not_schedulable_reasons" in record, what).toBe(false);
  } else if (want.reasons !== undefined) {
    expect(record.lifecycle, what).toBe(want.reasons.length === 0 ? "schedulable" : "incomplete");
    expect(listed, what).toEqual(want.reasons);
  } else if (record.lifecycle === "incomplete") {
    expect(listed, what).toHaveLength(1);
    expect(listed[0], what).toMatch(/^reconciliation failed: (block_size|is_eagle) mismatch for /);
  } else {
    expect(record.lifecycle, what).toBe("schedulable");
  }
}

interface Expected {
  id: bigint;
  held: { group: number; fields: Fields };
  /** `final`: DELETE's answer, the record as it left; `undefined`: the model cannot tell. */
  reasons: string[] | "final" | undefined;
}

function expected(model: CatalogModel, ids: bigint[], slot: number): Expected {
  return { id: ids[slot]!, held: model.held.get(slot)!, reasons: model.reasons(slot) };
}

/** Whether the model is sure the call is refused: all are but too many ranks where it cannot tell. */
function refusedForSure(op: Hostile, model: CatalogModel): boolean {
  const { base, mutation } = op;
  if (!("limit" in mutation) || mutation.limit !== "ranks" || base.kind === "delete") return true;
  const held = model.held.get(base.slot);
  if (base.kind === "patch" && held === undefined) return true;
  // Complete, the record joins the tracker whenever its group agrees on block size 4 without eagle.
  return model.agreesWith(held?.group ?? (base as { group: number }).group, base.slot, 4, false);
}

describe("hostile input on the selection catalog", () => {
  it(
    "refuses every broken catalog call with a 4xx that changes nothing, and answers valid ones as the model says",
    async () => {
      let runs = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 24 }), async (steps) => {
          const ids = idsOf(runs++);
          const { model: name } = uniquePartition("cat-fuzz");
          const model = new CatalogModel();
          // The state before the next refused call: read again only after a call that changed it.
          let state: string | undefined;
          for (let { op, encoding: enc } of steps) {
            const what = `${toJson(op).slice(0, 300)} ${toJson(enc)}`;
            let answer: Answer;
            if (op.kind === "hostile") {
              const { base } = op;
              state ??= await stateOf(name);
              answer = await request(base, ids, name, enc, op.mutation);
              const taken = answer.status < 300 && !refusedForSure(op, model);
              if (!taken) {
                expectRefused(answer, what);
                expect(await stateOf(name), what).toBe(state);
                continue;
              }
              // Too many ranks only matter to a worker that joins the tracker, which the model
              // cannot always tell: accepted, the write is a valid one.
              op = base.kind === "delete" ? base : { ...base, fields: { ...base.fields, ...LIMITS.ranks } };
            } else {
              answer = await request(op, ids, name, enc);
            }
            const leaving = op.kind === "delete" ? model.held.get(op.slot) : undefined;
            const want = model.apply(op);
            expect(answer.status, `${what} → ${answer.text.slice(0, 300)}`).toBe(want);
            if (want === 404) {
              expectRefused(answer, what);
              expect(parsed(answer).error, what).toBe(`worker ${ids[op.slot]} not found`);
              state ??= await stateOf(name);
              expect(await stateOf(name), what).toBe(state);
              continue;
            }
            state = undefined;
            const record = parsed(answer);
            if (leaving !== undefined) {
              expectRecord(record, { id: ids[op.slot]!, held: leaving, reasons: "final" }, what);
            } else {
              expectRecord(record, expected(model, ids, op.slot), what);
            }
          }
          await expectCatalog(name, model, ids);
          // Ids are service-wide: a run leaves none behind for the ones after it.
          for (const slot of model.held.keys()) {
            const answer = await send("DELETE", `/selection/workers/${ids[slot]}`);
            expect(answer.status, answer.text).toBe(200);
          }
        }),
        { numRuns: RUNS, interruptAfterTimeLimit: SHRINK_LIMIT_MS, markInterruptAsFailure: true },
      );
      expect(runs).toBe(RUNS);
    },
    TIMEOUT_MS,
  );
});

/** The listing holds the model's ids, each once, in (group, id) order, and agrees with the model. */
async function expectCatalog(name: string, model: CatalogModel, ids: bigint[]): Promise<void> {
  const answer = await send("GET", `/selection/workers?${new URLSearchParams({ model_name: name })}`);
  expect(answer.status, answer.text).toBe(200);
  const listed = parseExact(answer.text) as Record<string, unknown>[];
  const slots = listed.map((record) => ids.indexOf(normal(record.worker_id) as bigint));
  const want = [...model.held.entries()]
    .sort(([a, x], [b, y]) => x.group - y.group || (ids[a]! < ids[b]! ? -1 : 1))
    .map(([slot]) => slot);
  expect(slots, answer.text.slice(0, 300)).toEqual(want);
  listed.forEach((record, i) => {
    expectRecord(record, expected(model, ids, slots[i]!), `listed ${ids[slots[i]!]}`);
  });
  // Whoever fixed a group, its schedulable workers share one block size and eagle flag.
  for (const group of GROUPS) {
    const fixes = listed
      .filter((r) => r.routing_group === group && r.lifecycle === "schedulable")
      .map((r) => `${r.block_size}/${r.is_eagle === true}`);
    expect(new Set(fixes).size, group).toBeLessThanOrEqual(1);
  }
}

describe("refused writes that move a worker", () => {
  // A POST naming another partition is judged there before the worker leaves its old one, so a
  // write the new tracker refuses (413, 429) changes nothing (SPEC §6), as the fuzz above checks too.
  for (const limit of ["size", "ranks"] as const) {
    it(`leave the worker where it was when the new group refuses it (${limit})`, async () => {
      const { model: name } = uniquePartition("cat-move");
      const record = { worker_id: 2n ** 64n - 2n, model_name: name, endpoint: "http://w", block_size: 4 };
      expect((await send("POST", "/selection/workers", json(record, {}))).status).toBe(201);
      const before = await stateOf(name);
      const moved = { ...record, routing_group: GROUPS[1], ...LIMITS[limit] };
      expectRefused(await send("POST", "/selection/workers", json(moved, {})), `move ${limit}`);
      expect(await stateOf(name)).toBe(before);
    });
  }
});

describe("garbage on the catalog's write routes", () => {
  it("answers every JSON value that is no valid body with a 4xx error, never a 5xx", async () => {
    const { model: name } = uniquePartition("cat-garbage");
    const id = 2n ** 64n - 3n;
    const posted = await send("POST", "/selection/workers", json({ worker_id: id, model_name: name }, {}));
    expect(posted.status, posted.text).toBe(201);
    const samples = fc.sample(fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.boolean()), { numRuns: 150 });
    for (const [value, patch] of samples) {
      const [method, path] = patch ? ["PATCH", `/selection/workers/${id}`] : ["POST", "/selection/workers"];
      const answer = await send(method, path, {
        headers: { "content-type": "application/json" },
        body: JSON.stringify(value) ?? "",
      });
      // An object without any field of the patch's is a valid PATCH that changes nothing.
      if (answer.status < 400) continue;
      expectRefused(answer, `${method} ${JSON.stringify(value)?.slice(0, 100)}`);
    }
    expect((await send("DELETE", `/selection/workers/${id}`)).status).toBe(200);
  });
});
