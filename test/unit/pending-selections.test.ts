import { describe, expect, it } from "vitest";
import {
  type PendingSelection,
  PendingSelections,
} from "../../durable-objects/core/selection/pending-selections";
import { h, T0 } from "./tracker-fixtures";

function entry(workerId: bigint, blocks = 1): PendingSelection {
  return {
    workerId,
    dpRank: 0,
    tracking: new BigUint64Array(blocks),
    isl: 4 * blocks,
    effectivePrefillTokens: 4,
    trackPrefillTokens: true,
    cachePrompt: null,
  };
}

describe("pending selections", () => {
  it("keeps an entry for the TTL from its insertion, not past it", () => {
    const cache = new PendingSelections({ ttlMs: 120_000 });
    cache.put("a", entry(1n), T0);
    expect(cache.peek("a", T0 + 119_999)?.workerId).toBe(1n);
    expect(cache.peek("a", T0 + 120_000)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("keeps a re-inserted id's first anchor, and its place in line, while holding the new choice", () => {
    const cache = new PendingSelections({ ttlMs: 100, maxEntries: 2 });
    cache.put("a", entry(1n), T0);
    cache.put("b", entry(2n), T0 + 10);
    cache.put("a", entry(3n), T0 + 50);
    expect(cache.peek("a", T0 + 60)?.workerId).toBe(3n);
    // "a" is still the oldest insertion: a third id evicts it, not "b".
    cache.put("c", entry(4n), T0 + 60);
    expect(cache.peek("a", T0 + 60)).toBeUndefined();
    expect(cache.peek("b", T0 + 60)?.workerId).toBe(2n);
    // And "b" expires at its own anchor plus the TTL.
    expect(cache.peek("b", T0 + 110)).toBeUndefined();
    expect(cache.peek("c", T0 + 110)?.workerId).toBe(4n);
  });

  it("holds at most maxEntries, evicting the oldest insertions first", () => {
    const cache = new PendingSelections({ maxEntries: 4_096 });
    for (let i = 0; i < 5_000; i++) cache.put(`s${i}`, entry(BigInt(i)), T0 + i);
    expect(cache.size).toBe(4_096);
    expect(cache.peek("s903", T0 + 5_000)).toBeUndefined();
    expect(cache.peek("s904", T0 + 5_000)?.workerId).toBe(904n);
  });

  it("holds at most maxBytes of hashes, evicting the oldest first", () => {
    const cache = new PendingSelections({ maxBytes: 3 * (200 + 2 + 8 * 100) });
    for (const id of ["a", "b", "c", "d"]) cache.put(id, entry(1n, 100), T0);
    expect(cache.size).toBe(3);
    expect(cache.peek("a", T0)).toBeUndefined();
    expect(cache.bytes).toBeLessThanOrEqual(cache.bounds.maxBytes);
    cache.remove("b");
    cache.remove("b");
    expect(cache.size).toBe(2);
  });

  it("counts a cache prompt's hashes in its bytes", () => {
    const cache = new PendingSelections();
    cache.put("a", { ...entry(1n, 2), cachePrompt: { blockHashes: h(1, 2), sequenceHashes: h(3, 4) } }, T0);
    expect(cache.bytes).toBe(200 + 2 + 8 * 6);
  });
});
