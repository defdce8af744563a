import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PromptTrie } from "../../durable-objects/core/prompt-index/prompt-trie";
import { expected, words } from "./trie-oracle";

/**
 * The radix trie keeps runs of blocks in chunks of 16 and splits them where prompts diverge, moving
 * the smaller part. These cases use prompts long enough to span several chunks, branching at every
 * depth, so splits land before, on and after chunk edges, in both directions, over values that
 * repeat (a small alphabet) and values that do not.
 */

const wordsOf = (prompt: bigint[]) => words(...prompt);

interface Live {
  prompt: bigint[];
  rank: number;
  leaf: number;
}

function prefixCount(live: Live[]): number {
  const prefixes = new Set<string>();
  for (const { prompt } of live)
    for (let i = 1; i <= prompt.length; i++) prefixes.add(prompt.slice(0, i).join(","));
  return prefixes.size;
}

/** Prompts that share a prefix of a random length with one of a few long documents. */
function promptArb(alphabet: fc.Arbitrary<bigint>) {
  return fc
    .record({
      doc: fc.nat(2),
      shared: fc.nat(50),
      tail: fc.array(alphabet, { maxLength: 40 }),
    })
    .map(({ doc, shared, tail }) => [...DOCS[doc]!.slice(0, shared), ...tail]);
}

/** Rank ids on both sides of the 32-bit words of a segment's rank mask, and past it (64 and up). */
const RANKS = [0, 1, 31, 32, 63, 64, 65, 200];

const DOCS = [0, 1, 2].map((d) => Array.from({ length: 50 }, (_, i) => BigInt(1000 * (d + 1) + i)));

function check(alphabet: fc.Arbitrary<bigint>, runs: number) {
  const op = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("add" as const),
        prompt: promptArb(alphabet),
        rank: fc.constantFrom(...RANKS),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("remove" as const), index: fc.nat(30) }) },
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 40 }), promptArb(alphabet), (ops, query) => {
      const trie = new PromptTrie(16);
      const live: Live[] = [];
      for (const step of ops) {
        if (step.kind === "add") live.push({ ...step, leaf: trie.insert(wordsOf(step.prompt), step.rank) });
        else if (live.length > 0) {
          const [gone] = live.splice(step.index % live.length, 1);
          trie.remove(gone!.leaf, gone!.rank);
        }
        const depths = new Int32Array(RANKS[RANKS.length - 1]! + 1);
        trie.overlapDepths(wordsOf(query), depths);
        for (const rank of RANKS) {
          const want = expected(live, rank, query);
          expect(trie.blocks(rank)).toBe(want.blocks);
          expect(depths[rank]).toBe(want.depth);
        }
        expect(trie.size).toBe(prefixCount(live));
        for (const { prompt, leaf } of live) expect([...trie.prompt(leaf)]).toEqual(prompt);
      }
      for (const { leaf, rank } of live) trie.remove(leaf, rank);
      expect(trie.size).toBe(0);
      expect(trie.chunks).toBe(0);
    }),
    { numRuns: runs },
  );
}

describe("prompt trie over multi-chunk runs", () => {
  it("agrees with brute force when prompts branch anywhere along long shared prefixes", () => {
    check(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), 200);
  });

  it("agrees with brute force when values repeat within and across prompts", () => {
    check(fc.constantFrom(1000n, 1001n, 2003n, 7n, 2n ** 64n - 1n), 200);
  });

  it("stores nothing once every prompt is removed, and reuses the space for the next ones", () => {
    const trie = new PromptTrie(16);
    for (let round = 0; round < 3; round++) {
      const leaves = DOCS.flatMap((doc, d) =>
        [10, 16, 17, 33, 50].map((cut) => ({
          rank: d,
          leaf: trie.insert(wordsOf([...doc.slice(0, cut), BigInt(round * 100 + cut)]), d),
        })),
      );
      expect(trie.size).toBe(3 * (50 + 5));
      for (const { leaf, rank } of leaves) trie.remove(leaf, rank);
      expect(trie.size).toBe(0);
      expect(trie.chunks).toBe(0);
      expect([trie.blocks(0), trie.blocks(1), trie.blocks(2)]).toEqual([0, 0, 0]);
    }
  });
});
