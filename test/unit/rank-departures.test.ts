import fc from "fast-check";
import { expect, it } from "vitest";
import { RankDepartures } from "../../durable-objects/core/replica/rank-departures";

/**
 * `RankDepartures` against a plain list: entries keyed by (ts, origin) with an end that only moves
 * earlier, queried for the latest end before a key, while entries are dropped below a key or pruned
 * by end. Small alphabets so that keys repeat, tie on ts and land in the middle.
 */

type Op =
  | { op: "set" | "lower"; ts: number; origin: string; end: number }
  | { op: "query" | "dropBefore"; ts: number; origin: string }
  | { op: "prune"; horizon: number };

const ts = fc.nat({ max: 40 });
const origin = fc.constantFrom("a", "b", "c");
const end = fc.nat({ max: 100 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant("set" as const), ts, origin, end }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("lower" as const), ts, origin, end }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constant("query" as const), ts, origin }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("dropBefore" as const), ts, origin }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("prune" as const), horizon: end }) },
);

const before = (e: { ts: number; origin: string }, ts: number, origin: string) =>
  e.ts < ts || (e.ts === ts && e.origin < origin);

it("answers the latest end before a key as a plain list would, through inserts, lowering, drops and prunes", () => {
  fc.assert(
    fc.property(fc.array(opArb, { maxLength: 200 }), (ops) => {
      const real = new RankDepartures();
      let model: { ts: number; origin: string; end: number }[] = [];
      for (const o of ops) {
        const version = real.version;
        switch (o.op) {
          case "set":
          case "lower": {
            const known = model.find((e) => e.ts === o.ts && e.origin === o.origin);
            if (known) known.end = Math.min(known.end, o.end);
            else if (o.op === "set") model.push({ ts: o.ts, origin: o.origin, end: o.end });
            real[o.op](o.ts, o.origin, o.end);
            break;
          }
          case "query": {
            const ends = model.filter((e) => before(e, o.ts, o.origin)).map((e) => e.end);
            expect(real.lastEndBefore(o.ts, o.origin)).toBe(Math.max(Number.NEGATIVE_INFINITY, ...ends));
            expect(real.version).toBe(version);
            break;
          }
          case "dropBefore":
            model = model.filter((e) => !before(e, o.ts, o.origin));
            real.dropBefore(o.ts, o.origin);
            break;
          case "prune":
            model = model.filter((e) => e.end >= o.horizon);
            real.prune(o.horizon);
            break;
        }
        expect(real.length).toBe(model.length);
      }
    }),
    { numRuns: 300 },
  );
});
