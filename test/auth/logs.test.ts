import { afterEach, describe, expect, it, vi } from "vitest";
import { call, query, TOKENS } from "./client";

afterEach(() => {
  vi.restoreAllMocks();
});

/** Every line written while `run` runs, from every console method. */
async function linesDuring(run: () => Promise<unknown>): Promise<string> {
  const spies = (["log", "info", "warn", "error"] as const).map((method) => vi.spyOn(console, method));
  await run();
  return spies.flatMap((spy) => spy.mock.calls.map((args) => args.map(String).join(" "))).join("\n");
}

describe("the access log with tokens", () => {
  it("names the caller by its grant's name and never prints a token, valid or not", async () => {
    const model = `logs-${crypto.randomUUID()}`;
    const presented = "tok-someone-guessing-4711";
    const text = await linesDuring(async () => {
      await call("ops", "POST", "/register", {
        model_name: model,
        tenant_id: "acme",
        worker_id: 1,
        block_size: 16,
        dp_start: 0,
        dp_size: 1,
      });
      await call("acme", "GET", `/loads${query({ model_name: model, tenant_id: "acme" })}`);
      await call("none", "GET", "/loads", undefined, { authorization: `Bearer ${presented}` });
      await call("globex", "GET", `/loads${query({ model_name: model, tenant_id: "acme" })}`);
    });
    for (const token of [...Object.values(TOKENS), presented]) expect(text).not.toContain(token);
    const lines = text.split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((l) => [l.route, l.status, l.client])).toEqual([
      ["/register", 201, "ops"],
      ["/loads", 200, "acme"],
      ["/loads", 401, undefined],
      ["/loads", 403, "globex"],
    ]);
  });
});
