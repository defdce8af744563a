import { describe, expect, it } from "vitest";
import { ApproximateIndex } from "../../durable-objects/core/cache-index/approximate-index";
import type { CacheIndex, RankOverlap } from "../../durable-objects/core/cache-index/cache-index";
import { DEFAULT_ROUTER_TTL_SECS, MAX_CACHE_INDEX_ENTRIES } from "../../durable-objects/limits";
import { prompt, raw, U32_MAX, U64_MAX } from "./cache-index-model";

const T0 = 1_700_000_000_000;
const TTL = DEFAULT_ROUTER_TTL_SECS * 1000;
const W1 = 7n;
const W2 = 2n ** 53n + 1n;

function index(maxEntries = 1_000_000): ApproximateIndex {
  return new ApproximateIndex({ ttlMs: TTL, maxEntries, seed: 1, initialEntries: 16 });
}

/** Rows as (worker, rank, device blocks), which is all the approximate index reports. */
function device(rows: RankOverlap[]): [bigint, number, number][] {
  for (const row of rows) {
    expect([row.hostPinnedBlocks, row.diskBlocks, row.externalBlocks]).toEqual([0, 0, 0]);
  }
  return rows.map((r) => [r.workerId, r.dpRank, r.deviceBlocks]);
}

const Q = prompt(11n, 12n, 13n);

describe("approximate cache index: TTL", () => {
  it("keeps a recorded prompt until exactly its origin time plus the TTL", () => {
    const ix = index();
    ix.recordBooking(W1, 0, Q, T0);
    expect(ix.nextDeadline()).toBe(T0 + TTL);
    expect(device(ix.overlap(Q, T0 + TTL - 1))).toEqual([[W1, 0, 3]]);
    // At the deadline it no longer counts, before any expiry has run...
    expect(ix.overlap(Q, T0 + TTL)).toEqual([]);
    expect(ix.expire(T0 + TTL - 1)).toBe(0);
    expect(ix.stats().entries).toBe(3);
    // ...and expiry at the deadline removes it.
    expect(ix.expire(T0 + TTL)).toBe(3);
    expect(ix.stats()).toMatchObject({ entries: 0, blocks: 0, ranks: 0, expired: 3, evicted: 0 });
    expect(ix.nextDeadline()).toBeNull();
  });

  it("renews a block's TTL when a later booking records it again", () => {
    const ix = index();
    ix.recordBooking(W1, 0, Q, T0);
    ix.recordBooking(W1, 0, prompt(11n, 12n), T0 + 60_000);
    expect(ix.nextDeadline()).toBe(T0 + TTL);
    expect(ix.expire(T0 + TTL)).toBe(1);
    // The renewed prefix outlives the first deadline and goes at the second.
    expect(device(ix.overlap(Q, T0 + TTL))).toEqual([[W1, 0, 2]]);
    expect(ix.nextDeadline()).toBe(T0 + 60_000 + TTL);
    expect(ix.expire(T0 + 60_000 + TTL)).toBe(2);
    expect(ix.overlap(Q, T0 + 60_000 + TTL)).toEqual([]);
  });

  it("never shortens a deadline when a booking with an earlier origin time arrives late", () => {
    const ix = index();
    ix.recordBooking(W1, 0, Q, T0 + 60_000);
    ix.recordBooking(W1, 0, Q, T0);
    expect(ix.nextDeadline()).toBe(T0 + 60_000 + TTL);
    expect(ix.expire(T0 + TTL)).toBe(0);
    expect(device(ix.overlap(Q, T0 + TTL))).toEqual([[W1, 0, 3]]);
  });

  it("ignores a booking already due by the latest expiry", () => {
    const ix = index();
    ix.expire(T0 + TTL);
    ix.recordBooking(W1, 0, Q, T0);
    expect(ix.stats().entries).toBe(0);
    expect(ix.nextDeadline()).toBeNull();
    ix.recordBooking(W1, 0, Q, T0 + 1);
    expect(ix.stats().entries).toBe(3);
  });

  it("keeps entries however many other bookings come and go: only the TTL and removal drop them", () => {
    const ix = index();
    ix.recordBooking(W1, 0, Q, T0);
    for (let k = 0; k < 200; k++) ix.recordBooking(W2, k % 4, prompt(1000n + BigInt(k), 1n), T0 + k);
    // A booking's end has no call here: the index offers nothing that removes one booking.
    const methods = Object.getOwnPropertyNames(ApproximateIndex.prototype).filter((m) => m !== "constructor");
    expect(methods.filter((m) => /free|release|complete|unbook/i.test(m))).toEqual([]);
    expect(device(ix.overlap(Q, T0 + TTL - 1))).toEqual([[W1, 0, 3]]);
  });
});

describe("approximate cache index: removal", () => {
  it("drops every rank of a removed worker and nothing of the others", () => {
    const ix = index();
    ix.recordBooking(W1, 0, Q, T0);
    ix.recordBooking(W1, 3, Q, T0);
    ix.recordBooking(W2, 0, Q, T0);
    expect(ix.removeWorker(W1)).toBe(6);
    expect(device(ix.overlap(Q, T0))).toEqual([[W2, 0, 3]]);
    expect(ix.stats()).toMatchObject({ entries: 3, ranks: 1, blocks: 3 });
    expect(ix.removeWorker(W1)).toBe(0);
  });

  it("drops one rank of a worker whose dp range shrank, keeping its other ranks", () => {
    const ix = index();
    ix.recordBooking(W1, 0, Q, T0);
    ix.recordBooking(W1, 1, prompt(11n, 12n), T0);
    expect(ix.removeRank(W1, 0)).toBe(3);
    expect(ix.removeRank(W1, 5)).toBe(0);
    expect(device(ix.overlap(Q, T0))).toEqual([[W1, 1, 2]]);
    // A removed rank records again from nothing.
    ix.recordBooking(W1, 0, prompt(11n), T0);
    expect(device(ix.overlap(Q, T0))).toEqual([
      [W1, 0, 1],
      [W1, 1, 2],
    ]);
  });
});

describe("approximate cache index: matching", () => {
  it("counts each rank's leading consecutive blocks, ranks independent, rows by worker then rank", () => {
    const ix = index();
    ix.recordBooking(U64_MAX, 0, prompt(11n), T0);
    ix.recordBooking(W2, U32_MAX, Q, T0);
    ix.recordBooking(W2, 0, prompt(11n, 12n, 99n), T0);
    ix.recordBooking(W1, 2, prompt(50n, 12n, 13n), T0);
    expect(device(ix.overlap(Q, T0))).toEqual([
      [W2, 0, 2],
      [W2, U32_MAX, 3],
      [U64_MAX, 0, 1],
    ]);
    expect(device(ix.overlap(prompt(11n, 12n, 13n, 14n), T0))).toEqual([
      [W2, 0, 2],
      [W2, U32_MAX, 3],
      [U64_MAX, 0, 1],
    ]);
    expect(ix.overlap(prompt(12n, 13n), T0)).toEqual([]);
  });

  it("stops a rank's run at the first block it lacks, even if it holds later ones", () => {
    const q = Q.sequenceHashes;
    const ix = index();
    // Trusted hashes: the same blocks at positions 0 and 2 as Q, another block at position 1.
    ix.recordBooking(W1, 0, raw([11n, 77n, 13n], [q[0]!, q[1]!, q[2]!]), T0);
    expect(device(ix.overlap(Q, T0))).toEqual([[W1, 0, 1]]);
  });

  it("matches a block only when its local hash and its parent agree with the query's", () => {
    const q = Q.sequenceHashes;
    const ix = index();
    ix.recordBooking(W1, 0, Q, T0);
    expect(device(ix.overlap(raw([11n, 99n, 13n], [q[0]!, q[1]!, q[2]!]), T0))).toEqual([[W1, 0, 1]]);
    expect(device(ix.overlap(raw([11n, 12n, 13n], [q[0]!, 5n, q[2]!]), T0))).toEqual([[W1, 0, 1]]);
    expect(ix.overlap(raw([], []), T0)).toEqual([]);
  });

  it("does not count a rank whose entries for the prompt have passed their deadline", () => {
    const ix = index();
    ix.recordBooking(W1, 0, Q, T0);
    ix.recordBooking(W1, 1, Q, T0 + 10);
    expect(device(ix.overlap(Q, T0 + TTL + 5))).toEqual([[W1, 1, 3]]);
  });
});

describe("approximate cache index: the cap", () => {
  it("evicts the earliest deadline first, deepest position first within one, and counts it", () => {
    const ix = index(5);
    const a = prompt(1n, 2n, 3n);
    const b = prompt(4n, 5n, 6n);
    const c = prompt(7n, 8n, 9n);
    expect(ix.recordBooking(W1, 0, a, T0)).toBe(0);
    expect(ix.recordBooking(W1, 1, b, T0 + 1)).toBe(1);
    expect(device(ix.overlap(a, T0))).toEqual([[W1, 0, 2]]);
    // Same deadline as a's: of the five entries due first, c's deepest, then position 1 by rank.
    expect(ix.recordBooking(W1, 2, c, T0)).toBe(3);
    expect(device(ix.overlap(a, T0))).toEqual([[W1, 0, 1]]);
    expect(device(ix.overlap(b, T0))).toEqual([[W1, 1, 3]]);
    expect(device(ix.overlap(c, T0))).toEqual([[W1, 2, 1]]);
    expect(ix.stats()).toMatchObject({ entries: 5, maxEntries: 5, evicted: 4, expired: 0 });
  });

  it("evicts a recording that is due before everything it would displace", () => {
    const ix = index(3);
    ix.recordBooking(W1, 0, Q, T0);
    expect(ix.recordBooking(W2, 0, prompt(1n, 2n), T0 - 1)).toBe(2);
    expect(ix.overlap(prompt(1n, 2n), T0)).toEqual([]);
    expect(device(ix.overlap(Q, T0))).toEqual([[W1, 0, 3]]);
    expect(ix.stats()).toMatchObject({ entries: 3, evicted: 2 });
  });

  it("answers for the entries it kept, so a caller can tell it is at its cap", () => {
    const ix = index(100);
    for (let k = 0; k < 50; k++) ix.recordBooking(W1, k, prompt(1n, 2n, 3n), T0 + k);
    const stats = ix.stats();
    expect(stats.entries).toBe(stats.maxEntries);
    expect(stats.evicted).toBe(50);
    // The 50 bookings left 33 ranks with all three blocks and one with the first.
    const rows = ix.overlap(prompt(1n, 2n, 3n), T0);
    expect(rows.map((r) => r.deviceBlocks)).toEqual([1, ...Array(33).fill(3)]);
    expect(rows[0]!.dpRank).toBe(16);
  });
});

describe("approximate cache index: dump and figures", () => {
  it("dumps each rank's chains as Dynamo's Stored router events, branches hanging from their parent", () => {
    const ix: CacheIndex = index();
    const abc = prompt(11n, 12n, 13n);
    const abd = prompt(11n, 12n, 14n);
    ix.recordBooking(W2, 3, prompt(11n), T0);
    ix.recordBooking(W1, 0, abc, T0);
    ix.recordBooking(W1, 0, abd, T0 + 5);
    const [s0, s1, s2] = abc.sequenceHashes;
    const d2 = abd.sequenceHashes[2]!;
    const stored = (parent: bigint | null, blocks: [bigint, bigint][], start?: number) => ({
      stored: {
        parent_hash: parent,
        ...(start === undefined ? {} : { start_position: start }),
        blocks: blocks.map(([block_hash, tokens_hash]) => ({ block_hash, tokens_hash })),
      },
    });
    const events = ix.dump();
    // The two tails in the dump's order of siblings: by sequence hash.
    const [lo, hi] = (
      [
        [s2!, 13n],
        [d2, 14n],
      ] as [bigint, bigint][]
    ).sort((x, y) => (x[0] < y[0] ? -1 : 1));
    expect(events).toEqual([
      {
        worker_id: W1,
        storage_tier: "device",
        event: {
          event_id: 0,
          data: stored(null, [
            [s0!, 11n],
            [s1!, 12n],
          ]),
          dp_rank: 0,
        },
      },
      {
        worker_id: W1,
        storage_tier: "device",
        event: { event_id: 1, data: stored(s1!, [lo!], 2), dp_rank: 0 },
      },
      {
        worker_id: W1,
        storage_tier: "device",
        event: { event_id: 2, data: stored(s1!, [hi!], 2), dp_rank: 0 },
      },
      {
        worker_id: W2,
        storage_tier: "device",
        event: { event_id: 3, data: stored(null, [[s0!, 11n]]), dp_rank: 3 },
      },
    ]);
    // Field order is Dynamo's, so a peer reading the JSON sees its own layout.
    expect(Object.keys(events[0]!)).toEqual(["worker_id", "storage_tier", "event"]);
    expect(Object.keys(events[0]!.event)).toEqual(["event_id", "data", "dp_rank"]);
    expect(Object.keys(events[1]!.event.data.stored)).toEqual(["parent_hash", "start_position", "blocks"]);
  });

  it("counts shared blocks once and every rank's entry, and estimates its memory", () => {
    const ix = index();
    const empty = ix.stats().memoryBytes;
    ix.recordBooking(W1, 0, Q, T0);
    ix.recordBooking(W1, 1, Q, T0);
    ix.recordBooking(W2, 0, prompt(11n), T0 + 1);
    expect(ix.stats()).toMatchObject({ entries: 7, blocks: 3, ranks: 3, evicted: 0, expired: 0 });
    expect(empty).toBeGreaterThan(0);
    for (let k = 0; k < 2_000; k++) ix.recordBooking(W1, 0, prompt(BigInt(k) + 1000n), T0);
    expect(ix.stats().memoryBytes).toBeGreaterThan(empty + 2_000 * 64);
    expect(ix.recordBooking(W1, 0, raw([], []), T0)).toBe(0);
  });
});

describe("approximate cache index: options", () => {
  it("refuses a cap or TTL that could not bound or expire anything", () => {
    const bad = [
      { maxEntries: 0 },
      { maxEntries: 1.5 },
      { maxEntries: 10, ttlMs: 0 },
      { maxEntries: 10, ttlMs: Number.NaN },
    ];
    for (const options of bad) expect(() => new ApproximateIndex(options)).toThrow(RangeError);
    const defaults = new ApproximateIndex();
    expect([defaults.ttlMs, defaults.maxEntries]).toEqual([120_000, MAX_CACHE_INDEX_ENTRIES]);
  });
});
