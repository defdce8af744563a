import { describe, expect, it } from "vitest";
import { ApproximateIndex } from "../../durable-objects/core/cache-index/approximate-index";
import type { PromptBlocks, RankOverlap } from "../../durable-objects/core/cache-index/cache-index";
import { prompt } from "./cache-index-model";

const T0 = 1_700_000_000_000;
const W1 = 7n;
const W2 = 9n;

function index(keyOnLocal: boolean): ApproximateIndex {
  return new ApproximateIndex({ ttlMs: 120_000, maxEntries: 1_000, seed: 3, initialEntries: 16, keyOnLocal });
}

/** The prompt as a booking known only by its sequence hashes records and queries it. */
function byHash(p: PromptBlocks): PromptBlocks {
  return { localHashes: p.sequenceHashes, sequenceHashes: p.sequenceHashes };
}

const device = (rows: RankOverlap[]) => rows.map((r) => [r.workerId, r.dpRank, r.deviceBlocks]);
const Q = prompt(21n, 22n, 23n);

describe("approximate cache index keyed by sequence hash", () => {
  it("credits a prompt booked by hash to a query made from tokens, and the other way round", () => {
    const ix = index(false);
    ix.recordBooking(W1, 0, byHash(Q), T0);
    ix.recordBooking(W2, 1, Q, T0);
    expect(device(ix.overlap(Q, T0 + 1))).toEqual([
      [W1, 0, 3],
      [W2, 1, 3],
    ]);
    expect(device(ix.overlap(byHash(Q), T0 + 1))).toEqual([
      [W1, 0, 3],
      [W2, 1, 3],
    ]);
  });

  it("keeps the local hash a token booking gave, whichever order the bookings came in", () => {
    const hashFirst = index(false);
    hashFirst.recordBooking(W1, 0, byHash(Q), T0);
    hashFirst.recordBooking(W1, 0, Q, T0);
    const tokensFirst = index(false);
    tokensFirst.recordBooking(W1, 0, Q, T0);
    tokensFirst.recordBooking(W1, 0, byHash(Q), T0);
    const blocks = (ix: ApproximateIndex) => ix.dump().flatMap((e) => e.event.data.stored.blocks);
    const expected = [...Q.localHashes].map((local, i) => ({
      block_hash: Q.sequenceHashes[i]!,
      tokens_hash: local,
    }));
    expect(blocks(hashFirst)).toEqual(expected);
    expect(blocks(tokensFirst)).toEqual(expected);
    expect(hashFirst.stats()).toMatchObject({ entries: 3, blocks: 3 });
  });

  it("dumps a block only ever booked by hash with its sequence hash in the local hash's place", () => {
    const ix = index(false);
    ix.recordBooking(W1, 0, byHash(Q), T0);
    const stored = ix.dump()[0]!.event.data.stored.blocks;
    expect(stored.map((b) => b.tokens_hash)).toEqual([...Q.sequenceHashes]);
  });

  it("still tells different chains apart", () => {
    const ix = index(false);
    ix.recordBooking(W1, 0, Q, T0);
    expect(device(ix.overlap(prompt(21n, 22n, 99n), T0 + 1))).toEqual([[W1, 0, 2]]);
    expect(ix.overlap(prompt(20n, 22n, 23n), T0 + 1)).toEqual([]);
  });

  it("keyed by local hash too (the default), a booking by hash meets a token query at its first block only", () => {
    const ix = index(true);
    ix.recordBooking(W1, 0, byHash(Q), T0);
    expect(device(ix.overlap(Q, T0 + 1))).toEqual([[W1, 0, 1]]);
  });
});
