import { describe, expect, it } from "vitest";
import { parsePrometheus } from "../workers/prometheus-text";
import { type Caller, call, query } from "./client";

/** One model with a worker in each of tenants acme and globex, registered by the operators. */
async function twoTenants(): Promise<string> {
  const model = `list-${crypto.randomUUID()}`;
  for (const [tenant, worker_id] of [
    ["acme", 1],
    ["globex", 2],
  ] as const) {
    const body = { model_name: model, tenant_id: tenant, worker_id, block_size: 16, dp_start: 0, dp_size: 1 };
    expect((await call("ops", "POST", "/register", body)).status).toBe(201);
  }
  return model;
}

async function tenantsListed(
  caller: Caller,
  path: string,
  params: Record<string, string>,
): Promise<string[]> {
  const res = await call(caller, "GET", `${path}${query(params)}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { tenant_id: string }[]).map((row) => row.tenant_id);
}

describe("list routes show only what the token may see", () => {
  it("GET /workers and GET /loads keep the caller's tenants, all of them for a wildcard token", async () => {
    const model = await twoTenants();
    for (const path of ["/workers", "/loads"]) {
      expect(await tenantsListed("acme", path, { model_name: model })).toEqual(["acme"]);
      expect(await tenantsListed("globex", path, { model_name: model })).toEqual(["globex"]);
      expect(await tenantsListed("ops", path, { model_name: model })).toEqual(["acme", "globex"]);
    }
  });

  it("filters an unfiltered listing too", async () => {
    await twoTenants();
    const seen = await tenantsListed("acme", "/workers", {});
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen)).toEqual(new Set(["acme"]));
  });

  it("refuses a filter naming a tenant outside the token's scope, rather than answering empty", async () => {
    const model = await twoTenants();
    for (const path of ["/workers", "/loads", "/metrics"]) {
      const res = await call("acme", "GET", `${path}${query({ model_name: model, tenant_id: "globex" })}`);
      expect([path, res.status, await res.json()]).toEqual([
        path,
        403,
        { error: 'this token may not access tenant "globex"' },
      ]);
    }
  });

  it("GET /metrics keeps the caller's tenants", async () => {
    const model = await twoTenants();
    const tenantsIn = async (caller: Caller) => {
      const res = await call(caller, "GET", `/metrics${query({ model_name: model })}`);
      expect(res.status).toBe(200);
      const parsed = parsePrometheus(await res.text());
      return [
        ...new Set(parsed.samples.filter((s) => s.labels.model === model).map((s) => s.labels.tenant)),
      ].sort();
    };
    expect(await tenantsIn("acme")).toEqual(["acme"]);
    expect(await tenantsIn("globex")).toEqual(["globex"]);
    expect(await tenantsIn("ops")).toEqual(["acme", "globex"]);
  });
});
