import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";

/** The app with fresh module state (the per-isolate secret cache and warning flag). */
async function freshApp() {
  vi.resetModules();
  return (await import("../../src/app")).default;
}

/** Objects that answer every listing with nothing: these tests are about the gate before them. */
function envWith(apiTokens: string | undefined): Env {
  const namespace = { getByName: () => ({ listTrackers: async () => [], listWorkers: async () => [] }) };
  return {
    TRACKER: namespace,
    DIRECTORY: namespace,
    REPLICAS: "primary",
    REQUEST_EXPIRY_SECONDS: "300",
    ...(apiTokens !== undefined && { API_TOKENS: apiTokens }),
  } as unknown as Env;
}

beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a misconfigured API_TOKENS secret", () => {
  it("fails closed with 503 naming the problem, logs it once, and leaves /health up", async () => {
    const app = await freshApp();
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const env = envWith('{"tok-1": {"tenants": "acme"}');
    for (let i = 0; i < 3; i++) {
      const res = await app.request("/workers", { headers: { authorization: "Bearer tok-1" } }, env);
      expect([res.status, await res.json()]).toEqual([
        503,
        { error: "server misconfigured: API_TOKENS is not valid JSON" },
      ]);
    }
    expect((await app.request("/health", {}, env)).status).toBe(200);
    expect(error).toHaveBeenCalledTimes(1);
    expect(JSON.parse(String(error.mock.calls[0]?.[0]))).toEqual({
      level: "error",
      msg: "server misconfigured: API_TOKENS is not valid JSON",
    });
  });

  it("names a bad entry without quoting any token", async () => {
    const app = await freshApp();
    vi.spyOn(console, "error").mockImplementation(() => {});
    const res = await app.request("/loads", {}, envWith('{"tok-secret": {"tenant": ["acme"]}}'));
    const body = (await res.json()) as { error: string };
    expect([res.status, body.error]).toEqual([
      503,
      'server misconfigured: API_TOKENS entry 1: unknown field "tenant" (known: tenants, admin, name)',
    ]);
  });

  it("is read again when it changes: fixing the secret takes effect without a redeploy of code", async () => {
    const app = await freshApp();
    vi.spyOn(console, "error").mockImplementation(() => {});
    expect((await app.request("/workers", {}, envWith("nope"))).status).toBe(503);
    const fixed = envWith('{"tok-1": {"tenants": ["acme"]}}');
    const res = await app.request("/workers", { headers: { authorization: "Bearer tok-1" } }, fixed);
    expect(res.status).toBe(200);
  });
});

describe("no API_TOKENS secret", () => {
  it("runs open and warns once per isolate, however many requests come", async () => {
    const app = await freshApp();
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    for (let i = 0; i < 3; i++)
      expect((await app.request("/workers", {}, envWith(undefined))).status).toBe(200);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(JSON.parse(String(warn.mock.calls[0]?.[0]))).toEqual({
      level: "warn",
      msg: "API_TOKENS is not set: the API is open",
    });
  });
});
