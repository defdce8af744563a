/** The typed client's tests' plumbing: the Worker as the client's fetch, and a refusal's status and text. */
import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { SlotTrackerError } from "../../src/client";

/** `exports.default` is typed only when GlobalProps names the main module; its runtime shape is a Fetcher. */
const worker = (exports as unknown as { default: Fetcher }).default;

export const viaWorker: typeof fetch = (input, init) => worker.fetch(new Request(input, init));

/** What `call` was refused with, which must be a SlotTrackerError. */
export async function refusal(call: Promise<unknown>): Promise<{ status: number; message: string }> {
  const error: unknown = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SlotTrackerError);
  const { status, message } = error as SlotTrackerError;
  return { status, message };
}
