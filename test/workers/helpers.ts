import { env } from "cloudflare:workers";
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
