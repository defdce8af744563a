import { describe, expect, it } from "vitest";
import type { Tracker } from "../../durable-objects/core/tracker";
import { batch, BLOCK, call, promptOf, removed, stored } from "./kv-fixtures";
import { T0, tracker, worker } from "./tracker-fixtures";

/**
 * `POST /kv_events` in the pure core (SPEC §9): sequence numbers within an epoch, repeats, gaps that
 * change nothing, new epochs that clear the rank, and the checks that refuse a call whole.
 */

function fresh(): Tracker {
  const t = tracker();
  t.register(worker(1, 0, 2, BLOCK), T0);
  return t;
}

/** Device blocks (worker 1, rank 0) holds of the prompt of blocks `blocks`. */
function held(t: Tracker, blocks: number[], dpRank = 0): number {
  const row = t.cache.overlap(promptOf(blocks), T0).find((r) => r.workerId === 1n && r.dpRank === dpRank);
  return row?.deviceBlocks ?? 0;
}

describe("KV-event intake", () => {
  it("starts an epoch at whatever sequence number its first batch has and applies it", () => {
    const t = fresh();
    expect(t.kvEvents(call(41, [batch(stored([1, 2, 3]))]), T0)).toEqual({
      ok: true,
      applied: 1,
      ignored: 0,
      nextSeq: 42,
    });
    expect(held(t, [1, 2, 3, 4])).toBe(3);
  });

  it("numbers a call's batches from its sequence number and chains stored runs through their parents", () => {
    const t = fresh();
    t.kvEvents(call(0, [batch(stored([1, 2])), batch(stored([3], 2))]), T0);
    expect(t.kvEvents(call(2, [batch(stored([4], 3))]), T0)).toMatchObject({ ok: true, nextSeq: 3 });
    expect(held(t, [1, 2, 3, 4])).toBe(4);
  });

  it("acknowledges a repeat of applied numbers and ignores it, also when a call overlaps the next one", () => {
    const t = fresh();
    t.kvEvents(call(0, [batch(stored([1])), batch(stored([2], 1))]), T0);
    expect(t.kvEvents(call(0, [batch(removed([1]))]), T0)).toEqual({
      ok: true,
      applied: 0,
      ignored: 1,
      nextSeq: 2,
    });
    expect(held(t, [1, 2])).toBe(2);
    // Batches 1 (a repeat) and 2 (new): only the new one applies.
    expect(t.kvEvents(call(1, [batch(removed([2])), batch(stored([3], 2))]), T0)).toEqual({
      ok: true,
      applied: 1,
      ignored: 1,
      nextSeq: 3,
    });
    expect(held(t, [1, 2, 3])).toBe(3);
  });

  it("refuses a batch past the next expected number with that number, and changes nothing", () => {
    const t = fresh();
    t.kvEvents(call(5, [batch(stored([1]))]), T0);
    const before = t.cache.stats();
    const gap = t.kvEvents(call(7, [batch(removed([1])), batch(stored([2], 1))]), T0);
    expect(gap).toMatchObject({ ok: false, code: "sequence_gap", expectedSeq: 6 });
    expect(!gap.ok && gap.message).toContain("expected 6");
    expect(t.cache.stats()).toEqual(before);
    expect(t.kv.stream(1n, 0)?.nextSeq).toBe(6);
    expect(t.kv.counters.gaps).toBe(1);
  });

  it("clears the rank when a call names another epoch, which then starts anywhere", () => {
    const t = fresh();
    t.kvEvents(call(0, [batch(stored([1, 2]))]), T0);
    t.kvEvents(call(0, [batch(stored([5]))], "e1", 1n, 1), T0);
    expect(t.kvEvents(call(0, [batch(stored([3]))], "e2"), T0)).toMatchObject({ ok: true, nextSeq: 1 });
    expect(held(t, [1, 2])).toBe(0);
    expect(held(t, [3])).toBe(1);
    // The other rank of the worker keeps its own epoch and blocks.
    expect(held(t, [5], 1)).toBe(1);
  });

  it("refuses a call whole for an unknown rank, another block size or another batch rank", () => {
    const t = fresh();
    expect(t.kvEvents(call(0, [batch(stored([1]))], "e1", 1n, 7), T0)).toMatchObject({
      ok: false,
      code: "rank_not_found",
    });
    const wrongSize = { ...stored([2]), blockSize: BLOCK * 2 };
    const mixed = t.kvEvents(call(0, [batch(stored([1])), batch(wrongSize)]), T0);
    expect(mixed).toMatchObject({ ok: false, code: "invalid_input" });
    expect(!mixed.ok && mixed.message).toBe(
      "batch 1 event 0: block_size 8 does not match the tracker's block_size 4",
    );
    const otherRank = t.kvEvents(call(0, [{ ...batch(stored([1])), dpRank: 1 }]), T0);
    expect(!otherRank.ok && otherRank.message).toBe(
      "batch 0 is for data_parallel_rank 1, but the call is for dp_rank 0",
    );
    expect(t.kv.streams.size).toBe(0);
    expect(t.cache.stats().entries).toBe(0);
  });

  it("answers for a worker from its events once it has any: its booking-made entries go, later bookings record nothing", () => {
    const t = fresh();
    const prompt = promptOf([1, 2]);
    const booking = { workerId: 1n, dpRank: 0, hashes: prompt.sequenceHashes, newIslTokens: 8 };
    t.add({ ...booking, requestId: "a" }, T0);
    expect(held(t, [1, 2])).toBe(2);
    t.kvEvents(call(0, [batch(stored([7]))]), T0);
    expect(held(t, [1, 2])).toBe(0);
    t.add({ ...booking, requestId: "b" }, T0);
    expect(held(t, [1, 2])).toBe(0);
  });

  it("forgets a worker's streams and blocks when it leaves", () => {
    const t = fresh();
    t.register(worker(2, 0, 1, BLOCK), T0);
    t.kvEvents(call(0, [batch(stored([1]))]), T0);
    t.unregister(1n, T0);
    expect(t.kv.streams.size).toBe(0);
    expect(t.kv.sourced(1n)).toBe(false);
    expect(t.cache.stats().entries).toBe(0);
  });

  it("drops everything of the rank on AllBlocksCleared, and keeps what other ranks hold", () => {
    const t = fresh();
    t.kvEvents(call(0, [batch(stored([1, 2]))]), T0);
    t.kvEvents(call(0, [batch(stored([1, 2]))], "e1", 1n, 1), T0);
    t.kvEvents(call(1, [batch({ kind: "cleared" })]), T0);
    expect(held(t, [1, 2])).toBe(0);
    expect(held(t, [1, 2], 1)).toBe(2);
  });
});
