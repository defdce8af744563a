import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BlockPool } from "../../durable-objects/core/prompt-index/block-pool";
import { valueHash } from "../../durable-objects/core/prompt-index/ordered-slots";
import { ValueIndex } from "../../durable-objects/core/prompt-index/value-index";

/** A value as the pool holds it: its low and high u32 words. */
type Value = readonly [lo: number, hi: number];

const keyOf = ([lo, hi]: Value) => `${lo}:${hi}`;

/** Writes `values` to a fresh run of the pool, as the trie writes a segment's blocks; returns its positions. */
function writeRun(pool: BlockPool, values: readonly Value[]): number[] {
  const positions: number[] = [];
  let p = pool.allocate(values.length, 1);
  values.forEach(([lo, hi], k) => {
    if (k > 0) p = pool.after(p);
    pool.words[2 * p] = lo;
    pool.words[2 * p + 1] = hi;
    positions.push(p);
  });
  return positions;
}

interface Run {
  values: Value[];
  positions: number[];
}

describe("value index", () => {
  it("finds each value's owner like a map does, over claims, removals, relocations and owner changes", () => {
    const value = fc.oneof(
      fc.tuple(fc.constantFrom(0, 1, 0xffff_ffff), fc.constantFrom(0, 7, 0xffff_ffff)),
      fc.tuple(fc.nat({ max: 0xffff_ffff }), fc.nat({ max: 0xffff_ffff })),
    );
    const op = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          kind: fc.constant("claim" as const),
          values: fc.array(value, { minLength: 1, maxLength: 40 }),
        }),
      },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant("remove" as const), index: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("relocate" as const), index: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("handover" as const), index: fc.nat() }) },
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), fc.nat(), (ops, seed) => {
        const pool = new BlockPool(16);
        const index = new ValueIndex(seed, 16);
        /** Each value's owner, and every other position holding it (the trie's value groups). */
        const owners = new Map<string, number>();
        const copies = new Map<string, number[]>();
        /** Runs whose every position owns its value: those the trie would drop or move as a run. */
        const owned: Run[] = [];
        for (const step of ops) {
          if (step.kind === "claim") {
            const positions = writeRun(pool, step.values);
            const clashes = new Int32Array(2 * positions.length);
            const found = index.claimRun(pool, positions[0]!, positions.length, clashes);
            const expectedClashes: number[] = [];
            step.values.forEach((v, k) => {
              const owner = owners.get(keyOf(v));
              if (owner === undefined) owners.set(keyOf(v), positions[k]!);
              else {
                expectedClashes.push(positions[k]!, owner);
                copies.set(keyOf(v), [...(copies.get(keyOf(v)) ?? []), positions[k]!]);
              }
            });
            expect([...clashes.subarray(0, 2 * found)]).toEqual(expectedClashes);
            if (found === 0) owned.push({ values: step.values, positions });
          } else if (owned.length > 0) {
            const run = owned[step.index % owned.length]!;
            const clean = run.values.every((v) => !copies.has(keyOf(v)));
            if (step.kind === "remove" && clean) {
              index.removeRun(pool, run.positions[0]!, run.positions.length);
              for (const v of run.values) owners.delete(keyOf(v));
              owned.splice(owned.indexOf(run), 1);
            } else if (step.kind === "relocate" && clean) {
              const moved = writeRun(pool, run.values);
              index.relocateRun(pool, run.positions[0]!, moved[0]!, moved.length);
              run.values.forEach((v, k) => {
                owners.set(keyOf(v), moved[k]!);
              });
              run.positions = moved;
            } else if (step.kind === "handover") {
              // The owner of a value held twice leaves; a copy takes over, as when its segment goes.
              const v = run.values.find((x) => copies.has(keyOf(x)));
              if (v) {
                const next = copies.get(keyOf(v))!.pop()!;
                if (copies.get(keyOf(v))!.length === 0) copies.delete(keyOf(v));
                index.replace(pool.words, owners.get(keyOf(v))!, next);
                owners.set(keyOf(v), next);
                owned.splice(owned.indexOf(run), 1);
              }
            }
          }
          for (const [key, owner] of owners) {
            const [lo, hi] = key.split(":").map(Number) as [number, number];
            expect(index.find(pool.words, lo, hi)).toBe(owner);
          }
        }
        for (const run of owned) {
          if (run.values.some((v) => copies.has(keyOf(v)))) continue;
          index.removeRun(pool, run.positions[0]!, run.positions.length);
          for (const v of run.values) owners.delete(keyOf(v));
        }
        for (const [key, owner] of owners) {
          const [lo, hi] = key.split(":").map(Number) as [number, number];
          expect(index.find(pool.words, lo, hi)).toBe(owner);
          index.remove(pool.words, owner);
          expect(index.find(pool.words, lo, hi)).toBe(-1);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("keeps every value findable when more values crowd the last home slot than the spill slots hold", () => {
    const seed = 0x5eed;
    // Values whose hash is in the top 1/4096 of the range: every one of them is homed at the last slot.
    const crowded: Value[] = [];
    for (let lo = 0; crowded.length < 80; lo++) {
      if (valueHash(lo, 9, seed) >= 0x7fff_ffff - 2 ** 20) crowded.push([lo, 9]);
    }
    const pool = new BlockPool(16);
    const index = new ValueIndex(seed, 128);
    const plain = writeRun(pool, [
      [1, 2],
      [3, 4],
    ]);
    const positions = writeRun(pool, crowded);
    const clashes = new Int32Array(2 * crowded.length);
    expect(index.claimRun(pool, plain[0]!, plain.length, clashes)).toBe(0);
    expect(index.claimRun(pool, positions[0]!, positions.length, clashes)).toBe(0);
    for (const [k, [lo, hi]] of crowded.entries()) expect(index.find(pool.words, lo, hi)).toBe(positions[k]);
    for (let k = 0; k < crowded.length; k += 2) index.remove(pool.words, positions[k]!);
    for (const [k, [lo, hi]] of crowded.entries()) {
      expect(index.find(pool.words, lo, hi)).toBe(k % 2 ? positions[k] : -1);
    }
    expect(index.find(pool.words, 1, 2)).toBe(plain[0]);
    expect(index.find(pool.words, 3, 4)).toBe(plain[1]);
  });
});
