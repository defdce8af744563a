/**
 * A replicated tracker keeps request timelines for its prefill anchors (`core/replica/departure-log.ts`);
 * whatever the request rate, their number stays bounded by `MAX_PREFILL_TIMELINES`, the newest kept.
 */
import { expect, it } from "vitest";
import { Tracker } from "../../durable-objects/core/tracker";
import { MAX_PREFILL_TIMELINES } from "../../durable-objects/limits";

const T0 = 1_700_000_000_000;

it("keeps at most MAX_PREFILL_TIMELINES request ids at any request rate, cutting the oldest", () => {
  const tracker = new Tracker({ model: "m", tenant: "t", origin: "east", replicated: true });
  tracker.register({ workerId: 1n, blockSize: 16, dpStart: 0, dpSize: 1 }, T0);
  const ids = MAX_PREFILL_TIMELINES + 10_000;
  // One request a millisecond, each booked and freed: all inside the two expiry ages kept by time.
  for (let i = 0; i < ids; i++) {
    expect(
      tracker.add(
        { requestId: `r${i}`, workerId: 1n, dpRank: 0, hashes: new BigUint64Array(0), newIslTokens: 5 },
        T0 + i,
      ).ok,
    ).toBe(true);
    tracker.free(`r${i}`, T0 + i);
  }
  const before = tracker.departures!.size;
  expect(before).toBe(2 * ids);
  // The next periodic purge (every 10 s) cuts the oldest ids down to the cap.
  tracker.listLoads(T0 + ids + 10_000);
  expect(tracker.departures!.size).toBeLessThanOrEqual(2 * MAX_PREFILL_TIMELINES);
  expect(tracker.departures!.size).toBeGreaterThanOrEqual(2 * (MAX_PREFILL_TIMELINES - 1));
});
