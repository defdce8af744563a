/**
 * Hostile input over HTTP, in workerd, continued from `fuzz.test.ts` (its harness is
 * `fuzz-harness.ts`): the same sequences on a tracker that starts with workers and leases, and a
 * sample through the Worker's own entry point.
 *
 * A file of their own, because the pinned pool slows with every Durable Object it has constructed
 * in a file: each construction wraps the object class's prototype in one more `Proxy`
 * (`createProxyPrototypeClass` in `@cloudflare/vitest-pool-workers` 0.15.1), so every RPC property
 * read walks one layer per object made before it. After the 200 fresh trackers of the first
 * property, a CPU profile of the second showed 93 % of the isolate's time in that `get`, and on a
 * loaded 2-core machine the second property outran its 300 s (it takes about 20 s alone). A new
 * file starts with a fresh runner.
 */
import { exports } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { garbage, hostile, type Op, opArb, stray } from "./fuzz-arbitraries";
import { FuzzModel } from "./fuzz-model";
import { OWNERS } from "./fuzz-ops";
import { hostileRequest } from "./fuzz-wire";
import { applyOp, booking, call, expectModelState, RUNS, TIMEOUT_MS, worker } from "./fuzz-harness";

describe("hostile input on a tracker with workers and leases", () => {
  it(
    "does the same on a tracker that starts with workers and leases, so owned bookings are made and freed",
    async () => {
      // Workers 1 (ranks 0, 1) and 7 (ranks 3, 4) and two live leases, so that owned bookings
      // drawn from the same alphabets as above are often admitted, and deletes find them.
      const preamble: Op[] = [
        { kind: "valid", accept: "json", op: { kind: "register", enc: "json", worker: worker(1n, 0n) } },
        { kind: "valid", accept: "json", op: { kind: "register", enc: "msgpack", worker: worker(7n, 3n) } },
        ...OWNERS.slice(0, 2).map(
          (owner): Op => ({
            kind: "valid",
            accept: "json",
            op: { kind: "lease", owner, ttl: 600_000n, enc: "json" },
          }),
        ),
        // Owned bookings under ids the operations below reuse, one of them from a batch.
        {
          kind: "valid",
          accept: "json",
          op: { kind: "add", enc: "json", signed: false, args: booking("a", 1n, 0n, OWNERS[0]) },
        },
        {
          kind: "valid",
          accept: "msgpack",
          op: { kind: "add", enc: "msgpack", signed: true, args: booking("b", 7n, 3n, OWNERS[1]) },
        },
        {
          kind: "valid",
          accept: "json",
          op: { kind: "batch", enc: "json", ops: [{ op: "add", args: booking("c", 7n, 4n, OWNERS[0]) }] },
        },
      ];
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 40 }), async (ops) => {
          const model = new FuzzModel(`fuzz-${crypto.randomUUID()}`);
          for (const op of [...preamble, ...ops]) await applyOp(model, op);
          await expectModelState(model);
        }),
        { numRuns: RUNS / 2 },
      );
    },
    TIMEOUT_MS,
  );

  it("gives the same answers through the Worker's own entry point", async () => {
    // A sample through `exports.default` (which the pool makes slower with every call, see
    // `reliability-http.ts`): the entry point adds nothing that changes an answer.
    const entry = (exports as unknown as { default: Fetcher }).default;
    const model = new FuzzModel(`fuzz-${crypto.randomUUID()}`);
    const samples = fc.sample(fc.oneof(hostile, stray, garbage), { numRuns: 40, seed: 7 });
    for (const op of samples) {
      const request =
        op.kind === "hostile"
          ? hostileRequest(op.base, op.mutation, model.model, op.accept).request
          : op.kind === "stray"
            ? { method: op.method, path: op.path, headers: {}, body: null }
            : { method: "POST", path: op.path, headers: { "content-type": op.type }, body: op.bytes };
      const direct = await call(request);
      const again =
        op.kind === "hostile"
          ? hostileRequest(op.base, op.mutation, model.model, op.accept).request
          : request;
      const res = await entry.fetch(
        new Request(`http://x${again.path}`, {
          method: again.method,
          headers: again.headers,
          body: again.body,
        }),
      );
      const text = await res.text();
      expect(
        [res.status, text],
        JSON.stringify(op, (_k, v) => (typeof v === "bigint" ? `${v}n` : v)).slice(0, 300),
      ).toEqual([direct.status, direct.text]);
    }
  });
});
