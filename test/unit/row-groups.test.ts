import { describe, expect, it } from "vitest";
import { bytesOf, joinEntries, splitEntries } from "../../durable-objects/storage/row-groups";

describe("bytesOf", () => {
  it("gives a view covering its buffer that buffer, and copies exactly the bytes of one inside a larger buffer", () => {
    const whole = new BigUint64Array([1n, 2n]);
    expect(bytesOf(whole)).toBe(whole.buffer);
    const outer = new BigUint64Array([7n, 2n ** 64n - 1n, 9n]);
    const inner = outer.subarray(1, 2);
    const blob = bytesOf(inner);
    expect(blob).not.toBe(outer.buffer);
    expect([...new BigUint64Array(blob)]).toEqual([2n ** 64n - 1n]);
    const bytes = new Uint8Array([0, 1, 2, 3, 4]).subarray(1, 4);
    expect([...new Uint8Array(bytesOf(bytes))]).toEqual([1, 2, 3]);
  });
});

describe("joinEntries and splitEntries", () => {
  it("give back each entry of a joined run, in order", () => {
    const events = [Uint8Array.of(1), Uint8Array.of(), Uint8Array.of(2, 3, 4)].map((entry) => ({ entry }));
    const size = events.reduce((n, { entry }) => n + 4 + entry.length, 0);
    const split = splitEntries(joinEntries(events, 0, 3, size), 3);
    expect(split.map((e) => [...e])).toEqual([[1], [], [2, 3, 4]]);
  });
});
