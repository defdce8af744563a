/**
 * The selection catalog routes against recording fake objects: which trackers a call reaches and
 * in which order (a move removes before it upserts), readiness from the records gathered, and the
 * answers that depend on what the directory says.
 */
import { describe, expect, it } from "vitest";
import type { CatalogRecord } from "../../durable-objects/core/catalog/catalog-record";
import { trackerName } from "../../durable-objects/naming";
import app from "../../src/app";
import { fakeEnv, json } from "./route-fake-env";

function record(workerId: bigint, tenant: string, lifecycle: CatalogRecord["lifecycle"]): CatalogRecord {
  return {
    workerId,
    model: "m",
    tenant,
    kvEventsEndpoints: new Map(),
    taints: [],
    topologyDomains: new Map(),
    routerHintSourceControlEndpoints: new Map(),
    lifecycle,
    notSchedulableReasons: lifecycle === "incomplete" ? ["endpoint is required"] : [],
  };
}

const tracker = (tenant: string) => trackerName({ replica: "primary", model: "m", tenant });

describe("GET /selection/ready", () => {
  it("answers 503 with the body when nothing is schedulable, 200 when something is", async () => {
    for (const [lifecycle, status] of [
      ["incomplete", 503],
      ["schedulable", 200],
    ] as const) {
      const { env } = fakeEnv(
        { catalogList: async () => [record(1n, "g", lifecycle)] },
        { listPartitions: async () => [{ model: "m", tenant: "g" }] },
      );
      const res = await app.request("/selection/ready", {}, env);
      const body = (await res.json()) as { ready: boolean; schedulable_workers: number; workers: unknown[] };
      expect([res.status, body.ready, body.schedulable_workers, body.workers.length]).toEqual([
        status,
        status === 200,
        status === 200 ? 1 : 0,
        1,
      ]);
    }
  });
});

describe("POST /selection/workers naming another partition", () => {
  it("upserts the worker into the new partition first, then removes it from its old one", async () => {
    const { env, calls } = fakeEnv(
      {
        catalogDelete: async () => ({ ok: true, record: record(4n, "a", "unschedulable") }),
        catalogUpsert: async () => ({ ok: true, record: record(4n, "b", "schedulable") }),
      },
      { workerPartitions: async () => [{ model: "m", tenant: "a" }] },
    );
    const res = await app.request(
      "/selection/workers",
      json({ worker_id: 4, model_name: "m", routing_group: "b" }),
      env,
    );
    expect(res.status).toBe(201);
    expect(calls.map((c) => [c.method, c.object])).toEqual([
      ["workerPartitions", "directory:primary"],
      ["catalogUpsert", tracker("b")],
      ["catalogDelete", tracker("a")],
    ]);
  });

  it("leaves the old partition alone when the new one refuses the write", async () => {
    const { env, calls } = fakeEnv(
      {
        catalogDelete: async () => ({ ok: true, record: record(4n, "a", "unschedulable") }),
        catalogUpsert: async () => ({ ok: false, code: "limit_exceeded", message: "rank limit reached" }),
      },
      { workerPartitions: async () => [{ model: "m", tenant: "a" }] },
    );
    const res = await app.request(
      "/selection/workers",
      json({ worker_id: 4, model_name: "m", routing_group: "b" }),
      env,
    );
    expect(res.status).toBe(429);
    expect(calls.map((c) => c.method)).toEqual(["workerPartitions", "catalogUpsert"]);
  });
});

describe("PATCH and DELETE /selection/workers/{id} by the directory's partitions", () => {
  it("answers 404 when no partition lists the id, without calling a tracker", async () => {
    const { env, calls } = fakeEnv({}, { workerPartitions: async () => [] });
    const res = await app.request("/selection/workers/9", { method: "DELETE" }, env);
    expect([res.status, await res.json()]).toEqual([404, { error: "worker 9 not found" }]);
    expect(calls.map((c) => c.method)).toEqual(["workerPartitions"]);
  });

  it("refuses a PATCH of an id in two partitions with 409, and a DELETE removes it from both", async () => {
    const twice = async () => [
      { model: "m", tenant: "a" },
      { model: "m", tenant: "b" },
    ];
    const { env, calls } = fakeEnv(
      { catalogDelete: async () => ({ ok: true, record: record(9n, "a", "unschedulable") }) },
      { workerPartitions: twice },
    );
    const patch = await app.request(
      "/selection/workers/9",
      { method: "PATCH", body: "{}", headers: { "content-type": "application/json" } },
      env,
    );
    expect(patch.status).toBe(409);
    expect(((await patch.json()) as { error: string }).error).toBe(
      "worker 9 is registered in more than one partition (model=m routing_group=a, model=m routing_group=b); POST /workers with the one to keep",
    );
    const removed = await app.request("/selection/workers/9", { method: "DELETE" }, env);
    expect(removed.status).toBe(200);
    expect(calls.filter((c) => c.method === "catalogDelete").map((c) => c.object)).toEqual([
      tracker("a"),
      tracker("b"),
    ]);
  });
});
