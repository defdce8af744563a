/**
 * The outbox's in-memory tail against a plain log: whatever it answers (anything but null) is what
 * the log holds, and it answers for every read that starts within its newest `capacity` entries.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import { OutboxTail } from "../../durable-objects/replication/outbox-tail";

type Step = { kind: "push" } | { kind: "trim"; back: number } | { kind: "read"; back: number; max: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.constant({ kind: "push" as const }), weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant("trim" as const), back: fc.nat({ max: 40 }) }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant("read" as const),
      back: fc.nat({ max: 60 }),
      max: fc.integer({ min: 1, max: 20 }),
    }),
    weight: 3,
  },
);

it("answers reads, append times and trims as the log does, within its capacity", () => {
  fc.assert(
    fc.property(fc.array(step, { maxLength: 300 }), fc.integer({ min: 1, max: 32 }), (steps, capacity) => {
      const tail = new OutboxTail(capacity);
      const log = new Map<number, { entry: Uint8Array; at: number }>();
      let last = 0;
      let trimmedTo = 0;
      for (const s of steps) {
        if (s.kind === "push") {
          last++;
          const entry = Uint8Array.of(last & 0xff, last >> 8);
          log.set(last, { entry, at: 1000 + last });
          tail.push(last, entry, 1000 + last);
        } else if (s.kind === "trim") {
          const upTo = Math.max(trimmedTo, last - s.back);
          for (let seq = trimmedTo + 1; seq <= upTo; seq++) log.delete(seq);
          trimmedTo = upTo;
          tail.trim(upTo);
        } else {
          const after = Math.max(0, last - s.back);
          const expected = [...log.entries()]
            .filter(([seq]) => seq > after)
            .slice(0, s.max)
            .map(([seq, { entry }]) => ({ seq, entry }));
          const got = tail.read(after, s.max);
          if (got !== null) expect(got).toEqual(expected);
          // From within the newest `capacity` entries not yet trimmed, the tail always answers.
          if (last > trimmedTo && after >= Math.max(trimmedTo, last - capacity)) expect(got).not.toBeNull();
          const at = tail.appendedAt(after + 1);
          if (at !== null) expect(at).toBe(log.get(after + 1)?.at);
        }
      }
    }),
    { numRuns: 300 },
  );
});

it("keeps at most maxBytes of entries, the newest one always, and serves older reads from nothing", () => {
  const tail = new OutboxTail(100, 1_000);
  for (let seq = 1; seq <= 5; seq++) tail.push(seq, new Uint8Array(300), seq);
  // 1,500 bytes pushed: the three newest (900 bytes) are kept.
  expect(tail.read(0, 10)).toBeNull();
  expect(tail.read(2, 10)?.map((e) => e.seq)).toEqual([3, 4, 5]);
  tail.push(6, new Uint8Array(5_000), 6);
  expect(tail.read(5, 10)?.map((e) => e.seq)).toEqual([6]);
  expect(tail.read(4, 10)).toBeNull();
});
