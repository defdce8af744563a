/**
 * Which requests the access log writes a line for, by `ACCESS_LOG`: the Worker's app in Node over a
 * fake namespace, a 200 (`/health`), a 404 (an unknown path) and a 400 (a body that is not JSON).
 * The lines' fields are `test/workers/logs.test.ts`'s (which runs with `ACCESS_LOG=all`).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import app from "../../src/app";
import { accessLogMode } from "../../src/http/access-log";
import { fakeEnv } from "./route-fake-env";

afterEach(() => {
  vi.restoreAllMocks();
});

/** The statuses of the access-log lines written for three requests (200, 404, 400) under `mode`. */
async function loggedStatuses(mode: string | undefined): Promise<number[]> {
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  const env = { ...fakeEnv({}).env, ...(mode !== undefined && { ACCESS_LOG: mode }) };
  const statuses = [
    (await app.request("/health", {}, env)).status,
    (await app.request("/nope", {}, env)).status,
    (
      await app.request(
        "/add",
        { method: "POST", body: "{not json", headers: { "content-type": "application/json" } },
        env,
      )
    ).status,
  ];
  expect(statuses).toEqual([200, 404, 400]);
  const lines = log.mock.calls.map((args) => String(args[0]));
  log.mockRestore();
  return lines
    .filter((line) => line.startsWith('{"level":'))
    .map((line) => (JSON.parse(line) as { status: number }).status);
}

describe("ACCESS_LOG", () => {
  it("logs only answers of 400 or more when unset, as `errors` says", async () => {
    expect(await loggedStatuses(undefined)).toEqual([404, 400]);
    expect(await loggedStatuses("errors")).toEqual([404, 400]);
  });

  it("logs every request under `all`, and none under `off`", async () => {
    expect(await loggedStatuses("all")).toEqual([200, 404, 400]);
    expect(await loggedStatuses("off")).toEqual([]);
  });

  it("means the default for any other value, so a typo cannot silence the errors", async () => {
    expect(await loggedStatuses("ALL")).toEqual([404, 400]);
    expect(["", "verbose", "none", undefined].map(accessLogMode)).toEqual([
      "errors",
      "errors",
      "errors",
      "errors",
    ]);
  });
});
