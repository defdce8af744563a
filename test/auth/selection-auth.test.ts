import { describe, expect, it } from "vitest";
import { call, query } from "./client";

/**
 * Tokens on the selection catalog: writes need an admin token covering the routing group (the
 * tenant of a grant), reads show the groups a token covers, and a worker in a group the token does
 * not cover is not found for it rather than refused.
 */

const record = (model: string, group: string, workerId: number) => ({
  worker_id: workerId,
  model_name: model,
  routing_group: group,
  endpoint: `http://w${workerId}`,
  block_size: 16,
});

async function groupsListed(caller: "acme" | "globex" | "ops", params: Record<string, string>) {
  const res = await call(caller, "GET", `/selection/workers${query(params)}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { routing_group: string }[]).map((row) => row.routing_group);
}

describe("selection catalog auth", () => {
  it("lets only admin tokens write, each in the routing groups it covers", async () => {
    const model = `sel-auth-${crypto.randomUUID()}`;
    expect((await call("none", "POST", "/selection/workers", record(model, "acme", 1))).status).toBe(401);
    const plain = await call("acme", "POST", "/selection/workers", record(model, "acme", 1));
    expect([plain.status, await plain.json()]).toEqual([
      403,
      { error: "/selection/workers requires an admin token" },
    ]);
    expect((await call("acmeAdmin", "POST", "/selection/workers", record(model, "globex", 2))).status).toBe(
      403,
    );
    expect((await call("acmeAdmin", "POST", "/selection/workers", record(model, "acme", 1))).status).toBe(
      201,
    );
    expect((await call("ops", "POST", "/selection/workers", record(model, "globex", 2))).status).toBe(201);
    expect(await groupsListed("ops", { model_name: model })).toEqual(["acme", "globex"]);
  });

  it("shows each token its groups' records, refuses a filter outside them, and hides other groups' workers from PATCH and DELETE", async () => {
    const model = `sel-auth-${crypto.randomUUID()}`;
    const acmeId = 900_001;
    const globexId = acmeId + 1;
    expect((await call("ops", "POST", "/selection/workers", record(model, "acme", acmeId))).status).toBe(201);
    expect((await call("ops", "POST", "/selection/workers", record(model, "globex", globexId))).status).toBe(
      201,
    );
    expect(await groupsListed("acme", { model_name: model })).toEqual(["acme"]);
    expect(await groupsListed("globex", { model_name: model })).toEqual(["globex"]);
    const outside = await call(
      "acme",
      "GET",
      `/selection/workers${query({ model_name: model, routing_group: "globex" })}`,
    );
    expect(outside.status).toBe(403);
    const hidden = await call("acmeAdmin", "PATCH", `/selection/workers/${globexId}`, {
      endpoint: "http://x",
    });
    expect([hidden.status, await hidden.json()]).toEqual([404, { error: `worker ${globexId} not found` }]);
    expect((await call("acmeAdmin", "DELETE", `/selection/workers/${globexId}`)).status).toBe(404);
    expect(
      (await call("acmeAdmin", "PATCH", `/selection/workers/${acmeId}`, { endpoint: "http://y" })).status,
    ).toBe(200);
    expect(await groupsListed("ops", { model_name: model })).toEqual(["acme", "globex"]);
  });

  it("answers /selection/health without a token, /ready with the token's groups only, and the peer routes to admins only", async () => {
    const health = await call("none", "GET", "/selection/health");
    expect([health.status, await health.text()]).toEqual([200, '{"status":"ok"}']);
    expect((await call("none", "GET", "/selection/ready")).status).toBe(401);
    const ready = await call("globex", "GET", "/selection/ready");
    const body = (await ready.json()) as { workers: { routing_group: string }[] };
    expect(body.workers.every((r) => r.routing_group === "globex")).toBe(true);
    expect((await call("acme", "GET", "/selection/replica_sync/peers")).status).toBe(403);
    expect((await call("ops", "GET", "/selection/replica_sync/peers")).status).toBe(200);
  });
});
