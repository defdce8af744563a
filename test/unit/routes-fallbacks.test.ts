/**
 * What the Worker answers outside the happy path: unknown routes (404), wrong methods (405 with
 * Allow), `/health`, an unexpected exception (500 and one log line without the body) and an
 * overloaded object (503).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import app from "../../src/app";
import { fakeEnv, json } from "./route-fake-env";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("fallbacks and failures", () => {
  it("answers 404 route not found for an unknown path", async () => {
    const res = await app.request("/nope", {}, fakeEnv({}).env);
    expect([res.status, await res.json()]).toEqual([404, { error: "route not found" }]);
  });

  it("answers 405 method not allowed with Allow for a wrong method on a known path", async () => {
    const env = fakeEnv({}).env;
    const get = await app.request("/register", {}, env);
    expect([get.status, await get.json()]).toEqual([405, { error: "method not allowed" }]);
    expect(get.headers.get("allow")).toBe("POST");
    const post = await app.request("/workers", { method: "POST" }, env);
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  it("GET /health answers 200 with an empty body", async () => {
    const res = await app.request("/health", {}, fakeEnv({}).env);
    expect([res.status, await res.text()]).toEqual([200, ""]);
  });

  it("turns an unexpected exception into a 500 internal error and one JSON log line without the body", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const { env } = fakeEnv({
      free: async () => {
        throw new Error("storage exploded");
      },
    });
    const res = await app.request("/free", json({ model_name: "m", request_id: "secret-request" }), env);
    expect([res.status, await res.json()]).toEqual([500, { error: "internal error" }]);
    expect(log).toHaveBeenCalledTimes(1);
    const line = String(log.mock.calls[0]?.[0]);
    expect(JSON.parse(line)).toMatchObject({
      level: "error",
      path: "/free",
      error: "Error: storage exploded",
    });
    expect(line).not.toContain("secret-request");
  });

  it("answers 503 when the object reports overload", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const { env } = fakeEnv({
      free: async () => {
        throw Object.assign(new Error("Durable Object is overloaded"), { overloaded: true });
      },
    });
    const res = await app.request("/free", json({ model_name: "m", request_id: "r" }), env);
    expect(res.status).toBe(503);
  });
});
