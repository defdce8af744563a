import { describe, expect, it } from "vitest";
import { reserve, select } from "../../durable-objects/core/selection/reservations";
import type { SelectInput } from "../../durable-objects/selection-types";
import { A, B, Partition, range, schedulable, tokens } from "./selection-fixtures";
import { h } from "./tracker-fixtures";

const B_1_4 = 14643705804678351452n;
const S_1_8 = [B_1_4, 4945711292740353085n];

function book(p: Partition, id: string, prompt = tokens(...range(1, 4)), extra: Partial<SelectInput> = {}) {
  return select(p.ctx(), p.pending, { mode: "book", selectionId: id, prompt, ...extra });
}

describe("select", () => {
  it("answers a fresh /select of [1,2,3,4] with 4 tokens to prefill, books nothing", () => {
    const p = new Partition();
    const chosen = select(p.ctx(), p.pending, { mode: "query", prompt: tokens(...range(1, 4)) });
    expect(chosen).toMatchObject({
      ok: true,
      blockSize: 4,
      effectivePrefillTokens: 4,
      potentialDecodeBlocks: 1,
      overlap: { longestMatched: 0, gpu: 0, cpu: 0, disk: 0 },
    });
    expect(chosen.ok && "booking" in chosen).toBe(false);
    expect(p.tracker.liveRequests).toBe(0);
  });

  it("plays out the reference's worked example: A's cached block and B's idleness tie", () => {
    const seen = new Map<bigint, number>();
    for (let run = 0; run < 24; run++) {
      const p = new Partition();
      p.seed = run;
      expect(book(p, "warm", tokens(...range(1, 4)), { pinned: { workerId: A, dpRank: 0 } }).ok).toBe(true);
      const chosen = select(p.ctx(), p.pending, { mode: "query", prompt: tokens(...range(1, 8)) });
      if (!chosen.ok) throw new Error(chosen.message);
      // Both cost 4: A has 1 block cached and 4 tokens in prefill; B is idle.
      expect(chosen.effectivePrefillTokens).toBe(chosen.workerId === A ? 4 : 8);
      expect(chosen.overlap.dp).toEqual({ "0": chosen.workerId === A ? 4 : 0 });
      seen.set(chosen.workerId, (seen.get(chosen.workerId) ?? 0) + 1);
    }
    expect([...seen.keys()].sort()).toEqual([A, B]);
  });

  it("books with select_and_reserve: a live request under the selection id, with its booking facts", () => {
    const p = new Partition([schedulable(A)]);
    const booked = book(p, "sel-1", tokens(...range(1, 8)));
    expect(booked).toMatchObject({
      ok: true,
      selectionId: "sel-1",
      workerId: A,
      endpoint: "http://w1",
      booking: { islTokens: 8, trackPrefillTokens: true },
    });
    expect(booked.ok && [...booked.booking!.sequenceHashes]).toEqual(S_1_8);
    const live = p.tracker.request("sel-1");
    expect(live?.prefillTokens).toBe(8);
    expect(p.tracker.listLoads(p.now)).toEqual([
      { workerId: A, dpRank: 0, activePrefillTokens: 8, activeDecodeBlocks: 2 },
    ]);
    expect(book(p, "sel-1")).toEqual({
      ok: false,
      code: "duplicate_request",
      message: "selection sel-1 is already reserved or being reserved",
    });
  });

  it("books no prefill load when prefill is not tracked", () => {
    const p = new Partition([schedulable(A)]);
    const booked = book(p, "s", tokens(...range(1, 8)), { override: { trackPrefillTokens: false } });
    expect(booked.ok && booked.booking?.trackPrefillTokens).toBe(false);
    expect(p.tracker.request("s")?.prefillTokens).toBe(0);
  });

  it("answers 503 while the partition has no schedulable worker, and for a pin outside it", () => {
    const none = new Partition([]);
    expect(select(none.ctx(), none.pending, { mode: "query", prompt: tokens(1, 2, 3, 4) })).toEqual({
      ok: false,
      code: "no_worker",
      message: "no schedulable workers for model=model-a routing_group=default",
    });
    const p = new Partition();
    const pinned = select(p.ctx(), p.pending, {
      mode: "query",
      prompt: tokens(1, 2, 3, 4),
      pinned: { workerId: 9n, dpRank: 0 },
    });
    expect(pinned).toMatchObject({ ok: false, code: "no_worker" });
  });

  it("keeps to allowed workers and required taints", () => {
    const p = new Partition([schedulable(A), schedulable(B, { taints: ["gpu-h100"] })]);
    for (let i = 0; i < 8; i++) {
      const allowed = select(p.ctx(), p.pending, {
        mode: "query",
        prompt: tokens(...range(1, 8)),
        allowedWorkerIds: [B],
      });
      expect(allowed.ok && allowed.workerId).toBe(B);
      const tainted = select(p.ctx(), p.pending, {
        mode: "query",
        prompt: tokens(...range(1, 8)),
        requiredTaints: ["gpu-h100"],
      });
      expect(tainted.ok && tainted.workerId).toBe(B);
    }
  });

  it("adds the worker's load to an advisory selection only", () => {
    const p = new Partition([schedulable(A, { maxNumBatchedTokens: 8192n, totalKvBlocks: 1000n })]);
    const advisory = select(p.ctx(), p.pending, { mode: "advisory", prompt: tokens(1, 2, 3, 4) });
    expect(advisory.ok && advisory.workerLoad).toEqual({
      activePrefillTokens: 0,
      prefillTokenCapacity: 8192n,
      totalKvBlocks: 1000n,
    });
    const query = select(p.ctx(), p.pending, { mode: "query", prompt: tokens(1, 2, 3, 4) });
    expect(query.ok && "workerLoad" in query).toBe(false);
  });
});

describe("reservations", () => {
  it("replays a pending selection once: the second replay finds nothing", () => {
    const p = new Partition([schedulable(A)]);
    expect(
      select(p.ctx(), p.pending, { mode: "query", selectionId: "r1", prompt: tokens(...range(1, 8)) }).ok,
    ).toBe(true);
    expect(p.tracker.liveRequests).toBe(0);
    expect(reserve(p.ctx(), p.pending, { selectionId: "r1" })).toEqual({
      ok: true,
      selectionId: "r1",
      workerId: A,
      dpRank: 0,
      endpoint: "http://w1",
    });
    expect(p.tracker.request("r1")?.prefillTokens).toBe(8);
    expect(reserve(p.ctx(), p.pending, { selectionId: "r1" })).toEqual({
      ok: false,
      code: "request_not_found",
      message:
        "no pending selection r1 for model=model-a routing_group=default (expired, already used, or never selected)",
    });
  });

  it("keeps the pending selection when a replay fails, so a retry can succeed", () => {
    const p = new Partition([schedulable(A)]);
    select(p.ctx(), p.pending, { mode: "query", selectionId: "r2", prompt: tokens(...range(1, 8)) });
    const workers = p.workers;
    p.workers = [];
    expect(reserve(p.ctx(), p.pending, { selectionId: "r2" })).toMatchObject({
      ok: false,
      code: "no_worker",
    });
    p.workers = [schedulable(A, { dpStart: 1 })];
    expect(reserve(p.ctx(), p.pending, { selectionId: "r2" })).toEqual({
      ok: false,
      code: "rank_not_found",
      message: "schedulable worker 1 (dp_rank 0) not found for model=model-a routing_group=default",
    });
    p.workers = workers;
    // Booked meanwhile under the same id: a conflict, and still pending.
    p.tracker.add({ requestId: "r2", workerId: A, dpRank: 0, hashes: h(1), newIslTokens: 0 }, p.now);
    expect(reserve(p.ctx(), p.pending, { selectionId: "r2" })).toMatchObject({
      ok: false,
      code: "duplicate_request",
      message: "selection r2 is already reserved or being reserved",
    });
    p.tracker.free("r2", p.now);
    expect(reserve(p.ctx(), p.pending, { selectionId: "r2" }).ok).toBe(true);
  });

  it("books an explicit reservation on its (worker, rank) and discards the pending selection of its id", () => {
    const p = new Partition();
    select(p.ctx(), p.pending, { mode: "query", selectionId: "x", prompt: tokens(...range(1, 8)) });
    const explicit = reserve(p.ctx(), p.pending, {
      selectionId: "x",
      explicit: { workerId: B, dpRank: 0, prompt: tokens(...range(1, 8)), effectivePrefillTokens: 5 },
    });
    expect(explicit).toEqual({ ok: true, selectionId: "x", workerId: B, dpRank: 0, endpoint: "http://w2" });
    expect(p.tracker.request("x")?.prefillTokens).toBe(5);
    p.tracker.free("x", p.now);
    expect(reserve(p.ctx(), p.pending, { selectionId: "x" })).toMatchObject({
      ok: false,
      code: "request_not_found",
    });
  });

  it("refuses an explicit effective prefill above the prompt's tokens, and an unknown worker", () => {
    const p = new Partition();
    const prompt = { kind: "hashes" as const, sequenceHashes: h(7, 8), islTokens: 8 };
    expect(
      reserve(p.ctx(), p.pending, {
        selectionId: "e",
        explicit: { workerId: A, dpRank: 0, prompt, effectivePrefillTokens: 9 },
      }),
    ).toEqual({
      ok: false,
      code: "invalid_input",
      message: "effective_prefill_tokens (9) must not exceed isl_tokens (8)",
    });
    expect(
      reserve(p.ctx(), p.pending, { selectionId: "e", explicit: { workerId: 9n, dpRank: 0, prompt } }),
    ).toEqual({
      ok: false,
      code: "worker_not_found",
      message: "schedulable worker 9 not found for model=model-a routing_group=default",
    });
  });

  it("books 0 prefill tokens for an explicit reservation without effective_prefill_tokens, and no index entry for hashes alone", () => {
    const p = new Partition();
    const prompt = { kind: "hashes" as const, sequenceHashes: h(7, 8), islTokens: 8 };
    expect(
      reserve(p.ctx(), p.pending, { selectionId: "z", explicit: { workerId: A, dpRank: 0, prompt } }).ok,
    ).toBe(true);
    expect(p.tracker.request("z")?.prefillTokens).toBe(0);
    expect(p.tracker.cache.stats().entries).toBe(0);
  });

  it("records a trusted-hash booking by its public chain, recomputed from its local hashes", () => {
    const p = new Partition([schedulable(A)]);
    const prompt = {
      kind: "hashes" as const,
      blockHashes: BigUint64Array.from([B_1_4, 16777012769546811212n]),
      sequenceHashes: h(900, 901),
      islTokens: 8,
    };
    expect(book(p, "t", prompt).ok).toBe(true);
    const fromTokens = select(p.ctx(), p.pending, { mode: "query", prompt: tokens(...range(1, 8)) });
    expect(fromTokens.ok && fromTokens.effectivePrefillTokens).toBe(0);
  });
});
