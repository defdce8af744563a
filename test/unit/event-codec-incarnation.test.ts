import { decode, encode } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";
import type { RegisterEvent } from "../../durable-objects/core/replica/events";
import { decodeEvent, encodeEvent } from "../../durable-objects/replication/event-codec";

const U64_MAX = 2n ** 64n - 1n;
const key = { ts: 1_780_000_000_000 * 1024 + 5, origin: "weur" };
const register: RegisterEvent = {
  ...key,
  type: "register",
  workerId: 9n,
  blockSize: 16,
  dpStart: 0,
  dpSize: 2,
};

describe("a registration's incarnation in the event codec", () => {
  it("round-trips every u64 incarnation exactly, written last in RegisterWorker", () => {
    for (const incarnation of [0n, 1n, 2n ** 53n + 1n, U64_MAX]) {
      const event: RegisterEvent = { ...register, workerType: "prefill", incarnation };
      const bytes = encodeEvent(event);
      expect(decodeEvent(bytes)).toStrictEqual(event);
      const data = (decode(bytes, { useBigInt64: true }) as { data: { RegisterWorker: object } }).data;
      expect(Object.keys(data.RegisterWorker)).toEqual([
        "block_size",
        "dp_start",
        "dp_size",
        "worker_type",
        "incarnation",
      ]);
    }
  });

  it("writes a registration without one as before, and reads it, or a nil one, as absent", () => {
    const bytes = encodeEvent(register);
    const wire = decode(bytes, { useBigInt64: true }) as Record<string, unknown>;
    expect(wire.data).toEqual({ RegisterWorker: { block_size: 16, dp_start: 0, dp_size: 2 } });
    const decoded = decodeEvent(bytes);
    expect(decoded).toStrictEqual(register);
    expect("incarnation" in decoded).toBe(false);
    const withNil = encode(
      { ...wire, data: { RegisterWorker: { block_size: 16, dp_start: 0, dp_size: 2, incarnation: null } } },
      { useBigInt64: true },
    );
    expect(decodeEvent(withNil)).toStrictEqual(register);
  });

  it("refuses an incarnation that is not a u64", () => {
    const wire = decode(encodeEvent(register), { useBigInt64: true }) as Record<string, unknown>;
    for (const incarnation of [-1, "3", 1.5]) {
      const bytes = encode(
        { ...wire, data: { RegisterWorker: { block_size: 16, dp_start: 0, dp_size: 2, incarnation } } },
        { useBigInt64: true },
      );
      expect(() => decodeEvent(bytes)).toThrow(/incarnation/);
    }
  });
});
