import { describe, expect, it } from "vitest";
import { call, expectError, get, okJson, parseExact, post, uniqueModel } from "./api-http";
import { complete, deleteWorker, postWorker, type WireRecord } from "./selection-http";

/** `/selection/health`, `/selection/ready` and the replica peer routes with one replica. */

interface Ready {
  ready: boolean;
  schedulable_workers: number;
  workers: WireRecord[];
}

async function ready(): Promise<{ status: number; body: Ready }> {
  const res = await get("/selection/ready");
  return { status: res.status, body: parseExact(await res.text()) as Ready };
}

describe("GET /selection/health", () => {
  it('answers 200 {"status":"ok"}', async () => {
    const res = await get("/selection/health");
    expect([res.status, await res.text()]).toEqual([200, '{"status":"ok"}']);
  });
});

describe("GET /selection/ready", () => {
  it("counts schedulable workers catalog-wide and lists every record, sorted", async () => {
    const model = uniqueModel("ready");
    const before = await ready();
    await postWorker({ worker_id: 1, model_name: model });
    await postWorker(complete(model, 2, { routing_group: "z" }));
    const after = await ready();
    expect(after.status).toBe(200);
    expect(after.body.ready).toBe(true);
    expect(after.body.schedulable_workers).toBe(before.body.schedulable_workers + 1);
    const mine = after.body.workers.filter((r) => r.model_name === model);
    expect(mine.map((r) => [r.routing_group, r.worker_id, r.lifecycle])).toEqual([
      ["default", 1, "incomplete"],
      ["z", 2, "schedulable"],
    ]);
    await deleteWorker(2);
    const gone = await ready();
    expect(gone.body.schedulable_workers).toBe(before.body.schedulable_workers);
    expect(gone.status).toBe(gone.body.ready ? 200 : 503);
  });
});

describe("replica peers with one replica", () => {
  it("lists no peer, and refuses to register or deregister one with 409, replica sync being disabled", async () => {
    expect(await okJson(get("/selection/replica_sync/peers"))).toEqual([]);
    for (const path of ["/selection/replica_sync/register_peer", "/selection/replica_sync/deregister_peer"]) {
      await expectError(post(path, { endpoint: "tcp://peer:9092" }), 409, "replica sync is disabled");
      await expectError(post(path, {}), 422, /missing field `endpoint`/);
    }
    await expectError(call("GET", "/selection/replica_sync/register_peer"), 405, "method not allowed");
  });
});
