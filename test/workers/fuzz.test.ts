/**
 * Hostile input over HTTP, in workerd: fast-check sequences that interleave valid operations (tracked
 * by a plain model) with hostile requests: valid bodies broken by one mutation, random bytes and JSON,
 * stray paths and methods, odd query strings. Every hostile request must get a 4xx with an `error`
 * string (never a 5xx, never a hang), every valid one the model's status, and at the end the tracker
 * must hold exactly what the valid operations alone produce: workers, loads and leases. Leases
 * (`POST`/`DELETE /leases`) and the `owner` of bookings are among the operations and the fields
 * broken, so a refused lease call or owned booking must change nothing either.
 */
import { decode } from "@msgpack/msgpack";
import { env, exports } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { garbage, hostile, normalized, type Op, opArb, ROUTES, stray } from "./fuzz-arbitraries";
import { FuzzModel, parseExact } from "./fuzz-model";
import { type Encoding, OWNERS, type ValidOp } from "./fuzz-ops";
import { hostileRequest, validRequest, type WireRequest } from "./fuzz-wire";
import { type Answer, listing, postJson, send } from "./reliability-http";

/** Sequences per run of the suite: about 15 s on a 2-core machine, 60 s when it is busy. */
const RUNS = 200;
/** Room for a machine four times slower than a busy one. */
const TIMEOUT_MS = 300_000;

/** An answer's body, integers as bigint, whichever encoding it came in. */
function bodyOf(answer: Answer): unknown {
  if (!(answer.headers.get("content-type") ?? "").includes("msgpack")) return parseExact(answer.text);
  const ints = (v: unknown): unknown =>
    typeof v === "number" && Number.isInteger(v)
      ? BigInt(v)
      : Array.isArray(v)
        ? v.map(ints)
        : v && typeof v === "object"
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, ints(x)]))
          : v;
  return ints(decode(answer.bytes, { useBigInt64: true }));
}

/** Asserts the answer is `{"error": "<non-empty string>"}` with a 4xx status. */
function expectClientError(answer: Answer, what: string): void {
  expect(answer.status, `${what} → ${answer.status} ${answer.text.slice(0, 300)}`).toBeGreaterThanOrEqual(
    400,
  );
  expect(answer.status, `${what} → ${answer.status} ${answer.text.slice(0, 300)}`).toBeLessThan(500);
  const body = bodyOf(answer) as { error?: unknown };
  expect(
    typeof body.error === "string" && body.error.length > 0,
    `${what}: ${answer.text.slice(0, 300)}`,
  ).toBe(true);
}

function expectAnswer(answer: Answer, status: number, what: string): void {
  expect(answer.status, `${what} → ${answer.text.slice(0, 300)}`).toBe(status);
  if (status >= 400) expectClientError(answer, what);
  else if (status !== 200 || !what.startsWith("/potential_loads")) {
    if (!what.startsWith("/route") && !what.startsWith("/batch"))
      expect(bodyOf(answer)).toEqual({ status: "ok" });
  }
}

const call = (r: WireRequest) => send(r.method, r.path, { headers: r.headers, body: r.body });

async function applyValid(model: FuzzModel, op: ValidOp, acceptAs: Encoding): Promise<void> {
  const request = validRequest(op, model.model, acceptAs);
  const what = `${request.path} ${JSON.stringify(op, (_k, v) => (typeof v === "bigint" ? `${v}n` : v)).slice(0, 200)}`;
  const sentAt = Date.now();
  const answer = await call(request);
  switch (op.kind) {
    case "register":
      return expectAnswer(answer, model.register(op.worker), what);
    case "unregister":
      return expectAnswer(answer, model.unregister(op.workerId), what);
    case "add":
      return expectAnswer(answer, model.add(op.args, sentAt), what);
    case "prefill_complete":
      return expectAnswer(answer, model.prefillComplete(op.id), what);
    case "free":
      return expectAnswer(answer, model.free(op.id), what);
    case "potential_loads":
      if (model.blockSize === undefined) return expectAnswer(answer, 404, what);
      expect(answer.status, what).toBe(200);
      expect(bodyOf(answer), what).toEqual(model.potentialRows(op.hashes, op.tokens));
      return;
    case "route": {
      if (model.blockSize === undefined) return expectAnswer(answer, 404, what);
      if (model.requests.has(op.id)) return expectAnswer(answer, 409, what);
      if (op.owner !== undefined && !model.leases.has(op.owner)) return expectAnswer(answer, 404, what);
      expect(answer.status, `${what} → ${answer.text}`).toBe(201);
      const chosen = bodyOf(answer) as { worker_id: bigint; dp_rank: bigint };
      expect(model.canBook(op.id, chosen.worker_id, chosen.dp_rank), what).toBe(true);
      const args = {
        id: op.id,
        workerId: chosen.worker_id,
        rank: chosen.dp_rank,
        hashes: op.hashes,
        tokens: op.tokens,
      };
      expect(model.add({ ...args, ...(op.owner !== undefined && { owner: op.owner }) }, sentAt)).toBe(201);
      return;
    }
    case "lease": {
      expect(answer.status, `${what} → ${answer.text}`).toBe(200);
      const body = bodyOf(answer) as { owner: string; expires_at_ms: bigint };
      expect(body.owner, what).toBe(op.owner);
      expect(body.expires_at_ms, what).toBeGreaterThanOrEqual(BigInt(sentAt) + op.ttl);
      expect(model.renew(op.owner, body.expires_at_ms), `${what}: shortened`).toBe(true);
      return;
    }
    case "end_lease": {
      const { status, freed } = model.endLease(op.owner);
      expect(answer.status, `${what} → ${answer.text}`).toBe(status);
      if (status === 200) expect(bodyOf(answer), what).toEqual({ owner: op.owner, freed });
      else expectClientError(answer, what);
      return;
    }
    case "batch": {
      expect(answer.status, `${what} → ${answer.text}`).toBe(200);
      const expected = op.ops.map((sub) => {
        if (sub.op === "add") return model.add(sub.args, sentAt);
        return sub.op === "free" ? model.free(sub.id) : model.prefillComplete(sub.id);
      });
      const { results } = bodyOf(answer) as { results: { status: bigint; error?: string }[] };
      expect(
        results.map((r) => Number(r.status)),
        what,
      ).toEqual(expected);
      for (const r of results) if (r.status >= 400n) expect(typeof r.error).toBe("string");
      return;
    }
  }
}

async function applyOp(model: FuzzModel, op: Op): Promise<void> {
  switch (op.kind) {
    case "valid":
      return applyValid(model, op.op, op.accept);
    case "hostile": {
      const { request, expected } = hostileRequest(op.base, op.mutation, model.model, op.accept);
      const answer = await call(request);
      const what = `hostile ${request.path} ${JSON.stringify(op.mutation).slice(0, 200)} (${op.base.enc})`;
      expectClientError(answer, what);
      expect(answer.status, `${what} → ${answer.text.slice(0, 300)}`).toBe(expected);
      return;
    }
    case "stray": {
      const answer = await send(op.method, op.path);
      const what = `${op.method} ${op.path}`;
      expectClientError(answer, what);
      expect(answer.status, what).toBe(ROUTES.has(normalized(op.path)) ? 405 : 404);
      return;
    }
    case "query": {
      const answer = await send("GET", `${op.path}?${new URLSearchParams(op.params)}`);
      const what = `GET ${op.path} ${JSON.stringify(op.params)}`;
      if (answer.status !== 200) expectClientError(answer, what);
      return;
    }
    case "bad_end": {
      const query = new URLSearchParams(
        {
          owner: [
            ["model_name", model.model],
            ["tenant_id", "default"],
          ],
          no_model: [["tenant_id", "default"]],
          empty_model: [["model_name", ""]],
          long_model: [["model_name", "m".repeat(257)]],
          empty_tenant: [
            ["model_name", model.model],
            ["tenant_id", ""],
          ],
          disagree: [
            ["model_name", model.model],
            ["tenant_id", "default"],
            ["routing_group", "other"],
          ],
        }[op.query] as [string, string][],
      );
      const path = `/leases/${op.owner}?${query}`;
      const answer = await send("DELETE", path);
      expectClientError(answer, `DELETE ${path.slice(0, 200)}`);
      return;
    }
    case "garbage": {
      const answer = await send("POST", op.path, { headers: { "content-type": op.type }, body: op.bytes });
      expectClientError(answer, `garbage ${op.path} ${op.type} ${answer.text.slice(0, 100)}`);
      return;
    }
  }
}

/** `/workers`, `/loads` and every rank's live request count equal the model's. */
async function expectModelState(model: FuzzModel): Promise<void> {
  expect(parseExact(await listing("/workers", model.model))).toEqual(model.workerRows());
  const loads = parseExact(await listing("/loads", model.model));
  const counts =
    model.blockSize === undefined
      ? undefined
      : parseExact(
          (await postJson("/potential_loads", { model_name: model.model, sequence_hashes: [] })).text,
        );
  expect(loads).toEqual(model.loadRows());
  if (counts !== undefined) expect(counts).toEqual(model.potentialRows([], 0n));
  const leases = await send("GET", `/leases?${new URLSearchParams({ model_name: model.model })}`);
  expect(parseExact(leases.text)).toEqual(model.leaseRows());
}

const worker = (workerId: bigint, dpStart: bigint) => ({ workerId, blockSize: 16n, dpStart, dpSize: 2n });
const booking = (id: string, workerId: bigint, rank: bigint, owner: string | undefined) => ({
  id,
  workerId,
  rank,
  hashes: [1n, 2n ** 63n],
  tokens: 5n,
  owner,
});

describe("hostile input", () => {
  it(
    "answers every hostile request with a 4xx error and keeps exactly the valid operations' state",
    async () => {
      // No request the model books may expire before the test ends: the model knows no expiry.
      expect(Number(env.REQUEST_EXPIRY_SECONDS) * 1000).toBeGreaterThan(TIMEOUT_MS);
      let runs = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 40 }), async (ops) => {
          runs++;
          const model = new FuzzModel(`fuzz-${crypto.randomUUID()}`);
          for (const op of ops) await applyOp(model, op);
          await expectModelState(model);
        }),
        { numRuns: RUNS },
      );
      expect(runs).toBeGreaterThanOrEqual(RUNS);
    },
    TIMEOUT_MS,
  );

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
