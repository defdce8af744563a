/**
 * Hostile input on the selection routes, in workerd: fast-check sequences that interleave valid
 * selection calls (their statuses predicted by a small model of pending and booked ids) with
 * refused ones — a valid body broken by one mutation, bytes that are no body, a wrong content type.
 * Every refused call must get a 4xx with an `error` string, never a 5xx, and leave the loads, the
 * cache index and the leases as they were; at the end the live bookings are exactly the model's.
 * Leases (`/selection/leases`) and the `owner` of bookings are among the calls and the fields broken.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseExact } from "./api-http";
import { range, schedule, uniquePartition } from "./booking-http";
import { type Answer, send, toJson } from "./reliability-http";

/** Sequences per run: about 30 s on a loaded 2-core machine. */
const RUNS = 40;
const TIMEOUT_MS = 300_000;
const IDS = ["a", "b", "c", "d"];
const OWNERS = ["fe-1", "fe 2/é"];
/** Longer than the test may run: no lease lapses during it. */
const TTL_MS = 600_000;

type Valid =
  | { kind: "select"; tokens: number[]; id?: string }
  | { kind: "book"; tokens: number[]; id: string; owner?: string }
  | { kind: "replay"; id: string; owner?: string }
  | { kind: "explicit"; id: string; workerId: number; hashes: number[]; owner?: string }
  | { kind: "prefill" | "output" | "end"; id: string }
  | { kind: "lease" | "unlease"; owner: string };

interface Hostile {
  kind: "hostile";
  base: Valid;
  mutation: { field: string; value: unknown } | { drop: string } | { bytes: Uint8Array; type: string };
}

const tokens = fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 12 });
const id = fc.constantFrom(...IDS);
const owner = fc.constantFrom(...OWNERS);
const maybeOwner = fc.option(owner, { nil: undefined, freq: 2 });
const valid: fc.Arbitrary<Valid> = fc.oneof(
  fc.record({ kind: fc.constant("select" as const), tokens, id: fc.option(id, { nil: undefined }) }),
  fc.record({ kind: fc.constant("book" as const), tokens, id, owner: maybeOwner }),
  fc.record({ kind: fc.constant("replay" as const), id, owner: maybeOwner }),
  fc.record({
    kind: fc.constant("explicit" as const),
    id,
    workerId: fc.constantFrom(1, 2),
    hashes: fc.array(fc.integer({ min: -3, max: 3 }), { minLength: 1, maxLength: 4 }),
    owner: maybeOwner,
  }),
  fc.record({ kind: fc.constantFrom("prefill" as const, "output" as const, "end" as const), id }),
  // Leases come often, so that owned bookings find one.
  { arbitrary: fc.record({ kind: fc.constant("lease" as const), owner }), weight: 4 },
  fc.record({ kind: fc.constant("unlease" as const), owner }),
);

/** Replacements that no route accepts for the field. */
const BAD: Record<string, unknown[]> = {
  token_ids: ["x", [1.5], [-1], [2 ** 32], {}],
  model_name: [5, "", null],
  routing_group: ["", [], 1],
  selection_id: [7, "", false],
  router_config_override: [{ router_temperature: -1 }, { overlap_score_credit: "x" }, 3],
  pinned_worker: [{ worker_id: -1, dp_rank: 0 }, "w"],
  expected_output_tokens: [2 ** 32, -1, "n"],
  advisory: ["yes", 1],
  worker_id: [-1, "1", 1.5],
  sequence_hashes: [[2n ** 64n], "s", [[1]]],
  isl_tokens: [-1, "4", 0.5],
  decay_fraction: [2, -0.5, "x"],
  owner: ["", 7, "o".repeat(257), ["fe-1"]],
  ttl_ms: [999, 600_001, "1000", 1000.5, -1, null],
};

const hostile: fc.Arbitrary<Hostile> = valid
  .filter((v) => v.kind !== "prefill" && v.kind !== "end" && v.kind !== "unlease")
  .chain((base) => {
    const fields = Object.keys(bodyOf(base, "m")).filter((f) => f in BAD);
    const mutations: fc.Arbitrary<Hostile["mutation"]>[] = [
      fc.record({
        bytes: fc.oneof(fc.uint8Array({ maxLength: 60 }), fc.constant(new TextEncoder().encode("{"))),
        type: fc.constantFrom("application/json", "application/msgpack"),
      }),
      fc.constant({ bytes: new TextEncoder().encode("{}"), type: "text/plain" }),
    ];
    if (fields.length > 0) {
      mutations.push(
        fc
          .constantFrom(...fields)
          .chain((field) => fc.record({ field: fc.constant(field), value: fc.constantFrom(...BAD[field]!) })),
      );
    }
    if (base.kind === "replay" || base.kind === "explicit")
      mutations.push(fc.constant({ drop: "selection_id" }));
    if (base.kind === "explicit") mutations.push(fc.constant({ drop: "isl_tokens" }));
    if (base.kind === "output") mutations.push(fc.constant({ field: "decay_fraction", value: 1.0001 }));
    if (base.kind === "lease") mutations.push(fc.constantFrom({ drop: "owner" }, { drop: "ttl_ms" }));
    if (base.kind === "book" || base.kind === "replay" || base.kind === "explicit")
      mutations.push(fc.record({ field: fc.constant("owner"), value: fc.constantFrom(...BAD.owner!) }));
    return fc.record({
      kind: fc.constant("hostile" as const),
      base: fc.constant(base),
      mutation: fc.oneof(...mutations),
    });
  });

function pathOf(op: Valid, prefix = "", model = "m"): [method: string, path: string] {
  switch (op.kind) {
    case "lease":
      return ["POST", "/selection/leases"];
    case "unlease":
      return [
        "DELETE",
        `/selection/leases/${encodeURIComponent(op.owner)}?${new URLSearchParams({ model_name: model, routing_group: "default" })}`,
      ];
    case "select":
      return ["POST", "/selection/select"];
    case "book":
      return ["POST", "/selection/select_and_reserve"];
    case "replay":
    case "explicit":
      return ["POST", "/selection/reservations"];
    case "prefill":
      return ["POST", `/selection/reservations/${prefix}${op.id}/prefill_complete`];
    case "output":
      return ["POST", `/selection/reservations/${prefix}${op.id}/output_block`];
    case "end":
      return ["DELETE", `/selection/reservations/${prefix}${op.id}`];
  }
}

function bodyOf(op: Valid, model: string, prefix = ""): Record<string, unknown> {
  const partition = { model_name: model, routing_group: "default" };
  const sid = "id" in op && op.id !== undefined ? `${prefix}${op.id}` : undefined;
  const owned = "owner" in op && op.owner !== undefined ? { owner: op.owner } : {};
  switch (op.kind) {
    case "lease":
      return { ...partition, owner: op.owner, ttl_ms: TTL_MS };
    case "select":
      return { ...partition, token_ids: op.tokens, ...(op.id !== undefined && { selection_id: sid }) };
    case "book":
      return { ...partition, selection_id: sid, token_ids: op.tokens, ...owned };
    case "replay":
      return { ...partition, selection_id: sid, ...owned };
    case "explicit":
      return {
        ...partition,
        selection_id: sid,
        worker_id: op.workerId,
        sequence_hashes: op.hashes,
        isl_tokens: 8,
        ...owned,
      };
    case "output":
      return { decay_fraction: 0.5 };
    default:
      return {};
  }
}

/** Pending and booked ids and live leases, as the routes' rules say they move. */
class Model {
  readonly pending = new Set<string>();
  /** Booked ids, and the owner of each (null: unowned). */
  readonly live = new Map<string, string | null>();
  readonly leases = new Set<string>();

  /** Whether a booking naming `owner` is refused: 404 without a live lease. */
  private refused(owner: string | undefined): boolean {
    return owner !== undefined && !this.leases.has(owner);
  }

  apply(op: Valid): number {
    switch (op.kind) {
      case "select":
        if (op.id !== undefined) this.pending.add(op.id);
        return 200;
      case "book":
        if (this.live.has(op.id)) return 409;
        if (this.refused(op.owner)) return 404;
        this.live.set(op.id, op.owner ?? null);
        return 200;
      case "replay":
        // The owner first: a refused one leaves even the pending selection in place.
        if (this.refused(op.owner)) return 404;
        if (!this.pending.has(op.id)) return 404;
        if (this.live.has(op.id)) return 409;
        this.pending.delete(op.id);
        this.live.set(op.id, op.owner ?? null);
        return 201;
      case "explicit":
        if (this.refused(op.owner)) return 404;
        this.pending.delete(op.id);
        if (this.live.has(op.id)) return 409;
        this.live.set(op.id, op.owner ?? null);
        return 201;
      case "prefill":
      case "output":
        return this.live.has(op.id) ? 200 : 404;
      case "end":
        return this.live.delete(op.id) ? 200 : 404;
      case "lease":
        this.leases.add(op.owner);
        return 200;
      case "unlease":
        if (!this.leases.delete(op.owner)) return 404;
        for (const [id, owner] of this.live) if (owner === op.owner) this.live.delete(id);
        return 200;
    }
  }
}

function request(op: Valid, model: string, mutation?: Hostile["mutation"]) {
  // Reservation ids are service-wide: each run's are its own.
  const prefix = `${model}-`;
  const [method, path] = pathOf(op, prefix, model);
  if (mutation && "bytes" in mutation) {
    return send(method, path, { headers: { "content-type": mutation.type }, body: mutation.bytes });
  }
  const body = bodyOf(op, model, prefix);
  if (mutation && "drop" in mutation) delete body[mutation.drop];
  else if (mutation) body[mutation.field] = mutation.value;
  const sendsBody = op.kind !== "prefill" && op.kind !== "end" && op.kind !== "unlease";
  return send(
    method,
    path,
    sendsBody ? { headers: { "content-type": "application/json" }, body: toJson(body) } : {},
  );
}

/** What a refused call must leave as it was: every rank's load and the cache index. */
async function stateOf(model: string): Promise<string> {
  const loads = await send("GET", `/selection/loads?model_name=${model}`);
  const live = await send("GET", `/loads?model_name=${model}`);
  const dump = parseExact((await send("GET", "/selection/dump")).text) as Record<string, unknown>;
  const leases = await send("GET", `/selection/leases?model_name=${model}&routing_group=default`);
  return `${loads.text}\n${live.text}\n${toJson(dump[`${model}:default`])}\n${leases.text}`;
}

function expectRefused(answer: Answer, what: string): void {
  expect(answer.status, `${what} → ${answer.status} ${answer.text.slice(0, 200)}`).toBeGreaterThanOrEqual(
    400,
  );
  expect(answer.status, `${what} → ${answer.status} ${answer.text.slice(0, 200)}`).toBeLessThan(500);
  const error = (JSON.parse(answer.text) as { error?: unknown }).error;
  expect(typeof error === "string" && error.length > 0, what).toBe(true);
}

describe("hostile input on the selection routes", () => {
  it(
    "refuses every broken call with a 4xx that changes nothing, and answers valid ones as the model says",
    async () => {
      let runs = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(fc.oneof(valid, hostile), { minLength: 4, maxLength: 24 }), async (ops) => {
          runs++;
          const p = uniquePartition("sel-fuzz");
          await schedule(p, [{ workerId: 1n }, { workerId: 2n }]);
          const model = new Model();
          for (const op of ops) {
            if (op.kind === "hostile") {
              const before = await stateOf(p.model);
              const what = `hostile ${pathOf(op.base).join(" ")} ${toJson("bytes" in op.mutation ? op.mutation.type : op.mutation)}`;
              expectRefused(await request(op.base, p.model, op.mutation), what);
              expect(await stateOf(p.model), what).toBe(before);
              continue;
            }
            const answer = await request(op, p.model);
            const want = model.apply(op);
            expect(
              answer.status,
              `${pathOf(op).join(" ")} ${toJson(op)} → ${answer.text.slice(0, 200)}`,
            ).toBe(want);
            if (want >= 400) expectRefused(answer, toJson(op));
          }
          const loads = parseExact((await send("GET", `/loads?model_name=${p.model}`)).text) as {
            dp_rank: number;
          }[];
          expect(loads).toHaveLength(2);
          const leases = JSON.parse(
            (await send("GET", `/selection/leases?model_name=${p.model}&routing_group=default`)).text,
          ) as { owner: string; bookings: number }[];
          expect(leases.map((l) => [l.owner, l.bookings]).sort(), "live leases and their bookings").toEqual(
            [...model.leases]
              .map((o) => [o, [...model.live.values()].filter((owner) => owner === o).length])
              .sort(),
          );
          for (const id of IDS) {
            const answer = await send("POST", `/selection/reservations/${p.model}-${id}/prefill_complete`);
            expect(answer.status, id).toBe(model.live.has(id) ? 200 : 404);
          }
        }),
        { numRuns: RUNS },
      );
      expect(runs).toBe(RUNS);
    },
    TIMEOUT_MS,
  );

  it("answers garbage on every selection POST route with a 4xx error", async () => {
    const p = uniquePartition("sel-garbage");
    await schedule(p, [{ workerId: 1n }]);
    const samples = fc.sample(fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom(...range(0, 5))), {
      numRuns: 120,
      seed: 11,
    });
    const paths = [
      "/select",
      "/select_and_reserve",
      "/reservations",
      "/potential_loads",
      "/overlap_scores",
      "/reservations/a/output_block",
    ];
    for (const [value, i] of samples) {
      const path = `/selection${paths[i]!}`;
      const answer = await send("POST", path, {
        headers: { "content-type": "application/json" },
        body: JSON.stringify(value) ?? "",
      });
      if (answer.status < 400) {
        // Some JSON is a valid body (an empty object selects nothing without a prompt, but `{}` on
        // output_block is valid and answers 404 for an id never booked).
        continue;
      }
      expectRefused(answer, `${path} ${JSON.stringify(value)?.slice(0, 100)}`);
    }
  });
});
