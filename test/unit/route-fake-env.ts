/**
 * A fake Worker environment for the route tests: object namespaces whose stubs record every call and
 * answer from the given handlers, so a test sees exactly which tracker the Worker asked and with what.
 */
import type { DirectoryRpc, TrackerRpc } from "../../durable-objects/rpc";
import type { Result } from "../../durable-objects/types";
import type { Env } from "../../src/env";

type Call = { object: string; hint: string | undefined; method: string; args: unknown[] };

/** Namespaces whose stubs record every call and answer from the given handlers. */
export function fakeEnv(
  tracker: Partial<TrackerRpc>,
  directory: Partial<DirectoryRpc> = {},
  replicas = "primary",
) {
  const calls: Call[] = [];
  const namespace = (impl: object) => ({
    getByName: (object: string, options?: { locationHint?: string }) =>
      new Proxy(
        {},
        {
          get: (_target, method: string) => {
            const fn = (impl as Record<string, ((...args: unknown[]) => unknown) | undefined>)[method];
            if (fn === undefined) return undefined;
            return async (...args: unknown[]) => {
              calls.push({ object, hint: options?.locationHint, method, args });
              return fn(...args);
            };
          },
        },
      ),
  });
  const env = {
    TRACKER: namespace(tracker),
    DIRECTORY: namespace(directory),
    REPLICAS: replicas,
    REQUEST_EXPIRY_SECONDS: "300",
  } as unknown as Env;
  return { env, calls };
}

export const OK: Result = { ok: true };

/** A JSON POST; a string body is sent as it is. */
export const json = (body: unknown) => ({
  method: "POST",
  body: typeof body === "string" ? body : JSON.stringify(body),
  headers: { "content-type": "application/json" },
});
