import { describe, expect, it } from "vitest";
import type { Tracker } from "../../durable-objects/core/tracker";
import { decodeBlocks, h, prefillTokens, req, T0, tracker, U64_MAX, worker } from "./tracker-fixtures";

/** Potential loads of `query` as [prefill, decode, requests] per rank, in listing order. */
function potential(t: Tracker, query: BigUint64Array, newIslTokens = 0): number[][] {
  const result = t.potentialLoads(query, newIslTokens, T0);
  if (!result.ok) throw new Error(result.message);
  return result.loads.map((l) => [l.potentialPrefillTokens, l.potentialDecodeBlocks, l.activeRequests]);
}

function oneRank(): Tracker {
  const t = tracker();
  t.register(worker(1), T0);
  return t;
}

describe("potential loads", () => {
  it("reuses the rank's active prefix and adds the new tokens uniformly (seed example)", () => {
    const t = oneRank();
    t.add(req("req-1", 1, 0, h(1, 2, 3), 8), T0);
    expect(t.potentialLoads(h(1, 2, 4), 5, T0)).toEqual({
      ok: true,
      loads: [
        { workerId: 1n, dpRank: 0, potentialPrefillTokens: 13, potentialDecodeBlocks: 4, activeRequests: 1 },
      ],
    });
  });

  it("credits only the longest common prefix, not later hashes the rank also holds", () => {
    const t = oneRank();
    t.add(req("r", 1, 0, h(1, 2, 4, 5)), T0);
    expect(potential(t, h(1, 2, 3, 5))).toEqual([[0, 4 + 2, 1]]);
    expect(potential(t, h(2, 4, 5))).toEqual([[0, 4 + 3, 1]]);
    expect(potential(t, h(1, 2, 4, 5, 6))).toEqual([[0, 4 + 1, 1]]);
  });

  it("takes the best prefix over all live prompts of each rank separately", () => {
    const t = tracker();
    t.register(worker(1, 0, 3), T0);
    t.add(req("a", 1, 0, h(1, 2, 3)), T0);
    t.add(req("b", 1, 1, h(1)), T0);
    t.add(req("c", 1, 1, h(1, 2, 9)), T0);
    expect(potential(t, h(1, 2, 3), 7)).toEqual([
      [7, 3 + 0, 1],
      [7, 3 + 1, 2],
      [7, 0 + 3, 0],
    ]);
  });

  it("adds the active prefill of the rank, unreduced by the overlap, and drops it on prefill_complete", () => {
    const t = oneRank();
    t.add(req("a", 1, 0, h(1, 2), 30), T0);
    t.add(req("b", 1, 0, h(1, 3), 12), T0);
    expect(potential(t, h(1, 2), 5)).toEqual([[47, 3, 2]]);
    t.prefillComplete("a", T0);
    expect(potential(t, h(1, 2), 5)).toEqual([[17, 3, 2]]);
    t.free("b", T0);
    expect(potential(t, h(1, 2), 5)).toEqual([[5, 2, 1]]);
  });

  it("answers an empty query with the active blocks and the new tokens", () => {
    const t = oneRank();
    t.add(req("a", 1, 0, h(1, 2, 3), 4), T0);
    expect(potential(t, h(), 6)).toEqual([[10, 3, 1]]);
  });

  it("lists idle ranks with zero load, the whole query as new blocks and the new tokens", () => {
    const t = tracker();
    t.register(worker(1, 0, 2), T0);
    t.register(worker(2, 5, 1), T0);
    t.add(req("a", 1, 1, h(1, 2), 3), T0);
    expect(t.listLoads(T0)).toEqual([
      { workerId: 1n, dpRank: 0, activePrefillTokens: 0, activeDecodeBlocks: 0 },
      { workerId: 1n, dpRank: 1, activePrefillTokens: 3, activeDecodeBlocks: 2 },
      { workerId: 2n, dpRank: 5, activePrefillTokens: 0, activeDecodeBlocks: 0 },
    ]);
    expect(potential(t, h(1, 2, 3), 4)).toEqual([
      [4, 3, 0],
      [7, 3, 1],
      [4, 3, 0],
    ]);
  });

  it("orders loads by (worker_id, dp_rank) as u64, whatever the registration order", () => {
    const t = tracker();
    const big = 2n ** 53n;
    t.register(worker(U64_MAX, 0, 1), T0);
    t.register(worker(big + 1n, 3, 2), T0);
    t.register(worker(big, 7, 1), T0);
    t.register(worker(5, 1, 2), T0);
    const order = [
      [5n, 1],
      [5n, 2],
      [big, 7],
      [big + 1n, 3],
      [big + 1n, 4],
      [U64_MAX, 0],
    ];
    expect(t.listLoads(T0).map((l) => [l.workerId, l.dpRank])).toEqual(order);
    const result = t.potentialLoads(h(1), 0, T0);
    expect(result.ok && result.loads.map((l) => [l.workerId, l.dpRank])).toEqual(order);
    t.unregister(big, T0);
    expect(t.listLoads(T0).map((l) => l.workerId)).toEqual([5n, 5n, big + 1n, big + 1n, U64_MAX]);
  });
});

describe("active decode blocks", () => {
  it("counts a prefix shared by several prompts on one rank once", () => {
    const t = oneRank();
    t.add(req("a", 1, 0, h(1, 2, 3)), T0);
    t.add(req("b", 1, 0, h(1, 2, 4)), T0);
    t.add(req("c", 1, 0, h(1, 2, 3)), T0);
    expect(decodeBlocks(t, T0)).toEqual([4]);
    t.free("a", T0);
    expect(decodeBlocks(t, T0)).toEqual([4]);
    t.free("b", T0);
    expect(decodeBlocks(t, T0)).toEqual([3]);
  });

  it("counts a hash held on two ranks once on each, whatever the order of adds and frees", () => {
    const t = tracker();
    t.register(worker(1, 0, 2), T0);
    t.add(req("a", 1, 0, h(1, 2)), T0);
    t.add(req("b", 1, 1, h(1)), T0);
    t.add(req("c", 1, 0, h(1)), T0);
    t.add(req("d", 1, 1, h(1, 2)), T0);
    expect(decodeBlocks(t, T0)).toEqual([2, 2]);
    t.free("a", T0);
    expect(decodeBlocks(t, T0)).toEqual([1, 2]);
    t.free("d", T0);
    expect(decodeBlocks(t, T0)).toEqual([1, 1]);
    t.free("b", T0);
    expect(decodeBlocks(t, T0)).toEqual([1, 0]);
    t.free("c", T0);
    expect(decodeBlocks(t, T0)).toEqual([0, 0]);
  });

  it("counts the same hash at several depths of one prompt as one block", () => {
    const t = oneRank();
    t.add(req("a", 1, 0, h(1, 1, 1)), T0);
    expect(decodeBlocks(t, T0)).toEqual([1]);
    expect(potential(t, h(1, 1, 1, 1))).toEqual([[0, 1 + 1, 1]]);
    t.free("a", T0);
    expect(decodeBlocks(t, T0)).toEqual([0]);
  });

  it("counts a hash held at two depths by two prompts once, until the last holder leaves", () => {
    const t = oneRank();
    t.add(req("a", 1, 0, h(1, 2)), T0);
    t.add(req("b", 1, 0, h(2)), T0);
    expect(decodeBlocks(t, T0)).toEqual([2]);
    expect(potential(t, h(2, 1))).toEqual([[0, 2 + 1, 2]]);
    t.free("a", T0);
    expect(decodeBlocks(t, T0)).toEqual([1]);
    t.add(req("a", 1, 0, h(1, 2)), T0);
    t.free("b", T0);
    expect(decodeBlocks(t, T0)).toEqual([2]);
    t.free("a", T0);
    expect(decodeBlocks(t, T0)).toEqual([0]);
  });

  it("treats a signed -1 and 2^64 - 1 as the same block, and keeps both 32-bit halves apart", () => {
    const t = oneRank();
    t.add(req("a", 1, 0, h(-1)), T0);
    t.add(req("b", 1, 0, h(U64_MAX)), T0);
    expect(decodeBlocks(t, T0)).toEqual([1]);
    expect(potential(t, h(U64_MAX))).toEqual([[0, 1, 2]]);
    t.add(req("c", 1, 0, h(1)), T0);
    t.add(req("d", 1, 0, h(1n << 32n)), T0);
    t.add(req("e", 1, 0, h((1n << 32n) + 1n)), T0);
    expect(decodeBlocks(t, T0)).toEqual([4]);
    expect(potential(t, h(1n << 32n, 5))).toEqual([[0, 4 + 1, 5]]);
  });

  it("counts an empty prompt as a live request with no blocks", () => {
    const t = oneRank();
    t.add(req("a", 1, 0, h(), 6), T0);
    expect(t.listLoads(T0)).toEqual([
      { workerId: 1n, dpRank: 0, activePrefillTokens: 6, activeDecodeBlocks: 0 },
    ]);
    expect(potential(t, h(1, 2))).toEqual([[6, 2, 1]]);
    t.add(req("b", 1, 0, h(1)), T0);
    t.free("a", T0);
    expect(potential(t, h(1, 2))).toEqual([[0, 2, 1]]);
  });

  it("keeps a live prompt's hashes exactly, 64-bit values included", () => {
    const t = oneRank();
    const hashes = h(U64_MAX, 0, 2n ** 63n, 1n << 32n, 7);
    t.add(req("a", 1, 0, hashes), T0);
    const live = t.request("a");
    expect(live && [...t.promptOf(live)]).toEqual([...hashes]);
    expect(prefillTokens(t, T0)).toEqual([0]);
  });
});
