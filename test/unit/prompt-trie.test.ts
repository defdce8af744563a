import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PromptTrie } from "../../durable-objects/core/prompt-index/prompt-trie";
import { expected, words } from "./trie-oracle";

describe("prompt trie", () => {
  it("counts one block for a value repeated 65,536 times, on each of two ranks, and none after removal", () => {
    const trie = new PromptTrie();
    const prompt = words(...new Array<number>(65_536).fill(7));
    const a = trie.insert(prompt, 0);
    const b = trie.insert(prompt, 1);
    expect(trie.blocks(0)).toBe(1);
    expect(trie.blocks(1)).toBe(1);
    expect(trie.size).toBe(65_536);
    const depths = new Int32Array(2);
    trie.overlapDepths(prompt, depths);
    expect([...depths]).toEqual([65_536, 65_536]);
    trie.remove(a, 0);
    expect(trie.blocks(0)).toBe(0);
    expect(trie.blocks(1)).toBe(1);
    trie.remove(b, 1);
    expect(trie.blocks(1)).toBe(0);
    expect(trie.size).toBe(0);
  });

  it("counts a value shared under many parents once per rank", () => {
    const trie = new PromptTrie();
    const leaves = Array.from({ length: 1_000 }, (_, i) => trie.insert(words(i + 10, 5), i % 2));
    expect(trie.blocks(0)).toBe(501);
    expect(trie.blocks(1)).toBe(501);
    leaves.forEach((leaf, i) => {
      if (i > 1) trie.remove(leaf, i % 2);
    });
    expect(trie.blocks(0)).toBe(2);
    expect(trie.blocks(1)).toBe(2);
    expect(trie.prompt(leaves[1]!)).toEqual(BigUint64Array.from([11n, 5n]));
  });

  it("agrees with a brute-force count over random inserts and removals", () => {
    const hash = fc.constantFrom(0n, 1n, 2n, 3n, 2n ** 64n - 1n);
    const op = fc.oneof(
      fc.record({
        kind: fc.constant("add" as const),
        prompt: fc.array(hash, { maxLength: 6 }),
        rank: fc.nat(2),
      }),
      fc.record({ kind: fc.constant("remove" as const), index: fc.nat(20) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), fc.array(hash, { maxLength: 6 }), (ops, query) => {
        const trie = new PromptTrie(16);
        const live: { prompt: bigint[]; rank: number; leaf: number }[] = [];
        for (const step of ops) {
          if (step.kind === "add") {
            live.push({ ...step, leaf: trie.insert(words(...step.prompt), step.rank) });
          } else if (live.length > 0) {
            const [gone] = live.splice(step.index % live.length, 1);
            trie.remove(gone!.leaf, gone!.rank);
          }
          const depths = new Int32Array(3);
          trie.overlapDepths(words(...query), depths);
          for (let rank = 0; rank < 3; rank++) {
            const want = expected(live, rank, query);
            expect(trie.blocks(rank)).toBe(want.blocks);
            expect(depths[rank]).toBe(want.depth);
          }
          for (const { prompt, leaf } of live) expect([...trie.prompt(leaf)]).toEqual(prompt);
        }
      }),
      { numRuns: 300 },
    );
  });
});
