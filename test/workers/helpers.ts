import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import { trackerName } from "../../durable-objects/naming";

/** A fresh (model, tenant) per test, so tests in one file never share a tracker. */
export function uniqueKey(prefix = "model") {
  return { model: `${prefix}-${crypto.randomUUID()}`, tenant: "default", replica: "primary" };
}

export function trackerStub(key: { model: string; tenant: string; replica: string }) {
  return env.TRACKER.getByName(trackerName(key));
}

export function hashes(...values: (number | bigint)[]): BigUint64Array {
  return BigUint64Array.from(values.map((v) => BigInt.asUintN(64, BigInt(v))));
}

/**
 * Sets the clock that this isolate's code reads, the tracker objects' included (they run in the
 * test's isolate), to `start`, and returns the setter that moves it; `vi.restoreAllMocks()` gives
 * back the real one. Expiry then depends on the test's steps, not on how fast the machine runs them.
 */
export function setClock(start: number): (now: number) => void {
  let now = start;
  vi.spyOn(Date, "now").mockImplementation(() => now);
  return (to) => {
    now = to;
  };
}

/** Polls `check` until it returns true or `timeoutMs` passes; real timers only where no clock can be injected. */
export async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  stepMs = 50,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
  return check();
}

/**
 * A tracker's stored requests in add order, with the clock-dependent columns reduced to what must
 * hold of them (which are set, and the lifetime), so that trackers fed at different times compare.
 */
export function storedRequests(key: {
  model: string;
  tenant: string;
  replica: string;
}): Promise<Record<string, unknown>[]> {
  return runInDurableObject(trackerStub(key), (_instance, state) =>
    state.storage.sql
      .exec("SELECT * FROM requests ORDER BY seq")
      .toArray()
      .map(({ started_at, add_ts, deadline, prefill_ts, anchor_at, worker_id, hashes: prompt, ...row }) => ({
        ...row,
        worker_id: [...new Uint8Array(worker_id as ArrayBuffer)],
        hashes: [...new Uint8Array(prompt as ArrayBuffer)],
        types: [typeof started_at, typeof add_ts, typeof deadline, typeof prefill_ts, typeof anchor_at],
        lifetime: (deadline as number) - (started_at as number),
        anchored: anchor_at !== null,
      })),
  );
}
