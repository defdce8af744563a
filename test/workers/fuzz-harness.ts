/**
 * The hostile-input suite's harness (`fuzz.test.ts`, `fuzz-owned.test.ts`): applying an operation
 * to the service and to the model, the checks of each answer, and the check of the final state.
 */
import { decode } from "@msgpack/msgpack";
import { expect } from "vitest";
import { normalized, type Op, ROUTES } from "./fuzz-arbitraries";
import { type FuzzModel, parseExact } from "./fuzz-model";
import type { Encoding, ValidOp } from "./fuzz-ops";
import { hostileRequest, validRequest, type WireRequest } from "./fuzz-wire";
import { type Answer, listing, postJson, send } from "./reliability-http";

/** Sequences per run of the suite: about 15 s on a 2-core machine, 60 s when it is busy. */
export const RUNS = 200;
/** Room for a machine four times slower than a busy one. */
export const TIMEOUT_MS = 300_000;

/** An answer's body, integers as bigint, whichever encoding it came in. */
export function bodyOf(answer: Answer): unknown {
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
export function expectClientError(answer: Answer, what: string): void {
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

export function expectAnswer(answer: Answer, status: number, what: string): void {
  expect(answer.status, `${what} → ${answer.text.slice(0, 300)}`).toBe(status);
  if (status >= 400) expectClientError(answer, what);
  else if (status !== 200 || !what.startsWith("/potential_loads")) {
    if (!what.startsWith("/route") && !what.startsWith("/batch"))
      expect(bodyOf(answer)).toEqual({ status: "ok" });
  }
}

export const call = (r: WireRequest) => send(r.method, r.path, { headers: r.headers, body: r.body });

export async function applyValid(model: FuzzModel, op: ValidOp, acceptAs: Encoding): Promise<void> {
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

export async function applyOp(model: FuzzModel, op: Op): Promise<void> {
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
export async function expectModelState(model: FuzzModel): Promise<void> {
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

export const worker = (workerId: bigint, dpStart: bigint) => ({
  workerId,
  blockSize: 16n,
  dpStart,
  dpSize: 2n,
});
export const booking = (id: string, workerId: bigint, rank: bigint, owner: string | undefined) => ({
  id,
  workerId,
  rank,
  hashes: [1n, 2n ** 63n],
  tokens: 5n,
  owner,
});
