import { describe, expect, it } from "vitest";
import {
  addReservationOutputBlock,
  completeReservationPrefill,
  endReservation,
} from "../../durable-objects/core/selection/lifecycle";
import { select } from "../../durable-objects/core/selection/reservations";
import {
  cacheDump,
  overlapScores,
  selectionLoads,
  selectionPotentialLoads,
} from "../../durable-objects/core/selection/selection-views";
import { A, B, Partition, range, schedulable, tokens } from "./selection-fixtures";

/** A books [1..8] on A (4 of it cached later for [1..12]); B is idle. */
function warmed(): Partition {
  const p = new Partition([schedulable(A), schedulable(B)]);
  const booked = select(p.ctx(), p.pending, {
    mode: "book",
    selectionId: "w",
    prompt: tokens(...range(1, 8)),
    pinned: { workerId: A, dpRank: 0 },
  });
  if (!booked.ok) throw new Error(booked.message);
  return p;
}

describe("selection views", () => {
  it("lists each schedulable rank's active load", () => {
    const p = warmed();
    expect(selectionLoads(p.ctx())).toEqual([
      { workerId: A, dpRank: 0, potentialPrefillTokens: 8, potentialDecodeBlocks: 2, activeRequests: 1 },
      { workerId: B, dpRank: 0, potentialPrefillTokens: 0, potentialDecodeBlocks: 0, activeRequests: 0 },
    ]);
    expect(selectionLoads(new Partition([]).ctx())).toBeNull();
  });

  it("credits cached tokens in /potential_loads' prefill, unlike the slot-tracker API's", () => {
    const p = warmed();
    const potential = selectionPotentialLoads(p.ctx(), { prompt: tokens(...range(1, 12)) });
    // A: 8 active + 12 − 8 cached; 2 active blocks + 1 new. B: 12 and 3.
    expect(potential).toEqual({
      ok: true,
      loads: [
        { workerId: A, dpRank: 0, potentialPrefillTokens: 12, potentialDecodeBlocks: 3, activeRequests: 1 },
        { workerId: B, dpRank: 0, potentialPrefillTokens: 12, potentialDecodeBlocks: 3, activeRequests: 0 },
      ],
    });
    const untracked = selectionPotentialLoads(p.ctx(), {
      prompt: tokens(...range(1, 12)),
      override: { trackPrefillTokens: false },
    });
    expect(untracked.ok && untracked.loads.map((l) => l.potentialPrefillTokens)).toEqual([8, 0]);
  });

  it("scores each rank's overlap by tier, with the credit the cost gives it", () => {
    const p = warmed();
    p.config.overlapScoreCredit = 0.5;
    expect(overlapScores(p.ctx(), { prompt: tokens(...range(1, 12)) })).toEqual({
      ok: true,
      blockSize: 4,
      numBlocks: 3,
      workers: [
        {
          workerId: A,
          dpRank: 0,
          deviceBlocks: 2,
          hostPinnedBlocks: 2,
          diskBlocks: 2,
          hostPinnedExtensionBlocks: 0,
          diskExtensionBlocks: 0,
          routerCreditBlocks: 1,
        },
        {
          workerId: B,
          dpRank: 0,
          deviceBlocks: 0,
          hostPinnedBlocks: 0,
          diskBlocks: 0,
          hostPinnedExtensionBlocks: 0,
          diskExtensionBlocks: 0,
          routerCreditBlocks: 0,
        },
      ],
    });
  });

  it("dumps the index with the partition's block size", () => {
    const p = warmed();
    const dump = cacheDump(p.ctx());
    expect(dump?.blockSize).toBe(4);
    expect(dump?.events).toHaveLength(1);
    expect(dump?.events[0]).toMatchObject({ worker_id: A, storage_tier: "device", event: { dp_rank: 0 } });
  });
});

describe("reservation lifecycle", () => {
  it("completes prefill (a repeat too), adds output blocks, and ends the booking; then answers 404", () => {
    const p = warmed();
    const t = p.tracker;
    expect(completeReservationPrefill(t, "w", p.now)).toEqual({ ok: true });
    expect(completeReservationPrefill(t, "w", p.now)).toEqual({ ok: true });
    expect(t.listLoads(p.now)[0]).toMatchObject({ activePrefillTokens: 0, activeDecodeBlocks: 2 });
    addReservationOutputBlock(t, "w", undefined, p.now);
    addReservationOutputBlock(t, "w", 0.25, p.now);
    addReservationOutputBlock(t, "w", 0.25, p.now);
    expect(t.listLoads(p.now)[0]!.activeDecodeBlocks).toBe(2 + 2);
    expect(endReservation(t, "w", p.now)).toEqual({ ok: true });
    expect(t.listLoads(p.now)[0]!.activeDecodeBlocks).toBe(0);
    const missing = { ok: false, code: "request_not_found", message: "reservation w not found" };
    expect(endReservation(t, "w", p.now)).toEqual(missing);
    expect(completeReservationPrefill(t, "w", p.now)).toEqual(missing);
    expect(addReservationOutputBlock(t, "w", 1, p.now)).toEqual(missing);
  });
});
