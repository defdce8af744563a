import { describe, expect, it } from "vitest";
import { PUBLIC_TRACKING, trackingHashOf } from "../../durable-objects/core/hashing/tracking-config";

describe("the tracking-hash configuration", () => {
  const KEY = btoa(String.fromCharCode(...new Uint8Array(32).fill(0x5a)));

  it("is public without settings", () => {
    expect(trackingHashOf({})).toEqual({ ok: true, tracking: PUBLIC_TRACKING });
    expect(trackingHashOf({ ROUTER_TRACKING_HASH: "public-xxh3-v1", ROUTER_TRACKING_KEY_ID: "" })).toEqual({
      ok: true,
      tracking: PUBLIC_TRACKING,
    });
  });

  it("is keyed with a 32-byte base64 key and a key id, named or not", () => {
    const expected = { algorithm: "keyed-xxh3-v1", keyId: "2026-01", key: new Uint8Array(32).fill(0x5a) };
    expect(trackingHashOf({ ROUTER_TRACKING_KEY: KEY, ROUTER_TRACKING_KEY_ID: "2026-01" })).toEqual({
      ok: true,
      tracking: expected,
    });
    expect(
      trackingHashOf({
        ROUTER_TRACKING_HASH: "keyed-xxh3-v1",
        ROUTER_TRACKING_KEY: `${KEY}\n`,
        ROUTER_TRACKING_KEY_ID: "2026-01",
      }),
    ).toEqual({ ok: true, tracking: expected });
  });

  it.each([
    [
      { ROUTER_TRACKING_HASH: "xxh3" },
      'router_tracking_hash must be public-xxh3-v1 or keyed-xxh3-v1, got "xxh3"',
    ],
    [
      { ROUTER_TRACKING_HASH: "public-xxh3-v1", ROUTER_TRACKING_KEY: KEY },
      "router tracking key options require router_tracking_hash=keyed-xxh3-v1",
    ],
    [
      { ROUTER_TRACKING_HASH: "public-xxh3-v1", ROUTER_TRACKING_KEY_ID: "2026-01" },
      "router tracking key options require router_tracking_hash=keyed-xxh3-v1",
    ],
    [{ ROUTER_TRACKING_HASH: "keyed-xxh3-v1" }, "keyed-xxh3-v1 requires router_tracking_key_file"],
    [{ ROUTER_TRACKING_KEY_ID: "2026-01" }, "keyed-xxh3-v1 requires router_tracking_key_file"],
    [{ ROUTER_TRACKING_KEY: KEY }, "keyed-xxh3-v1 requires a nonempty router_tracking_key_id"],
    [
      { ROUTER_TRACKING_KEY: KEY, ROUTER_TRACKING_KEY_ID: " 2026-01" },
      "keyed-xxh3-v1 requires a nonempty router_tracking_key_id",
    ],
    [
      { ROUTER_TRACKING_KEY: KEY, ROUTER_TRACKING_KEY_ID: "2026-01\u3000" },
      "keyed-xxh3-v1 requires a nonempty router_tracking_key_id",
    ],
    [
      { ROUTER_TRACKING_KEY: "not base64!", ROUTER_TRACKING_KEY_ID: "2026-01" },
      "failed to read router tracking key file",
    ],
    [
      { ROUTER_TRACKING_KEY: btoa("x".repeat(31)), ROUTER_TRACKING_KEY_ID: "2026-01" },
      "router tracking key file must contain exactly 32 raw bytes; found 31",
    ],
    [
      { ROUTER_TRACKING_KEY: btoa("x".repeat(33)), ROUTER_TRACKING_KEY_ID: "2026-01" },
      "router tracking key file must contain exactly 32 raw bytes; found 33",
    ],
  ])("refuses %j with Dynamo's text", (env, problem) => {
    expect(trackingHashOf(env)).toEqual({ ok: false, problem });
  });

  it("accepts a key id with inner spaces or a byte-order mark, as Rust's trim does", () => {
    for (const keyId of ["2026 01", "\ufeff2026-01"]) {
      expect(trackingHashOf({ ROUTER_TRACKING_KEY: KEY, ROUTER_TRACKING_KEY_ID: keyId }).ok).toBe(true);
    }
  });
});
