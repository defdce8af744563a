import { describe, expect, it } from "vitest";
import {
  add,
  expectError,
  expectOk,
  itBooking,
  loadsOf,
  post,
  register,
  uniqueModel,
  workersOf,
} from "./api-http";
import {
  catalogOf,
  catalogText,
  complete,
  deleteWorker,
  patchWorker,
  postWorker,
  recordOf,
} from "./selection-http";

/**
 * One tracker, two APIs (SPEC §7): the selection catalog and the slot-tracker API's registry and
 * bookings on the same objects, and worker ids service-wide in the selection API.
 */

const loadRows = async (model: string) =>
  ((await loadsOf({ model })) as { worker_id: number; dp_rank: number; active_prefill_tokens: number }[]).map(
    (row) => [row.worker_id, row.dp_rank, row.active_prefill_tokens],
  );

describe("where the catalog meets /register", () => {
  it("lists a /register'ed worker as incomplete, endpoint required, until a POST gives it one", async () => {
    const model = uniqueModel("meet");
    await expectOk(register({ model }, 4, { dpSize: 2 }), 201);
    expect(await catalogOf({ model_name: model })).toMatchObject([
      {
        worker_id: 4,
        lifecycle: "incomplete",
        block_size: 16,
        data_parallel_start_rank: 0,
        data_parallel_size: 2,
        not_schedulable_reasons: ["endpoint is required"],
      },
    ]);
    const upgraded = await recordOf(postWorker(complete(model, 4, { data_parallel_size: 2 })));
    expect(upgraded.record.lifecycle).toBe("schedulable");
  });

  it("puts a schedulable catalog worker in /workers and lets /add book its ranks", async () => {
    const model = uniqueModel("meet");
    await postWorker(complete(model, 8, { data_parallel_start_rank: 2, data_parallel_size: 2 }));
    expect(await workersOf({ model })).toEqual([
      { worker_id: 8, model_name: model, tenant_id: "default", block_size: 16, dp_start: 2, dp_size: 2 },
    ]);
    await expectOk(add({ model }, "r", 8, 3, [1, 2], 10), 201);
    expect(await loadRows(model)).toEqual([
      [8, 2, 0],
      [8, 3, 10],
    ]);
  });

  it("refuses /register of a catalog worker as a duplicate, and /unregister removes it from the catalog", async () => {
    const model = uniqueModel("meet");
    await postWorker(complete(model, 6));
    await expectError(
      register({ model }, 6),
      409,
      `worker 6 already registered for model=${model} tenant=default`,
    );
    await expectOk(post("/unregister", { model_name: model, worker_id: 6 }), 200);
    expect(await catalogOf({ model_name: model })).toEqual([]);
  });

  it("turns an incomplete record schedulable with a PATCH, and it joins the slot tracker", async () => {
    const model = uniqueModel("meet");
    await postWorker({ worker_id: 2, model_name: model, block_size: 16 });
    expect(await workersOf({ model })).toEqual([]);
    await patchWorker(2, { endpoint: "http://w2" });
    expect(await workersOf({ model })).toMatchObject([{ worker_id: 2, dp_start: 0, dp_size: 1 }]);
  });
});

describe("a DP range change", () => {
  itBooking(
    "keeps bookings made with /add on ranks in both ranges and drops those on removed ranks",
    async () => {
      const model = uniqueModel("range");
      await postWorker(complete(model, 1, { data_parallel_size: 4 }));
      for (const rank of [0, 1, 2, 3])
        await expectOk(add({ model }, `r${rank}`, 1, rank, [rank + 1], 10 + rank), 201);
      const patched = await recordOf(patchWorker(1, { data_parallel_start_rank: 2, data_parallel_size: 3 }));
      expect(patched.record).toMatchObject({
        lifecycle: "schedulable",
        data_parallel_start_rank: 2,
        data_parallel_size: 3,
      });
      expect(await loadRows(model)).toEqual([
        [1, 2, 12],
        [1, 3, 13],
        [1, 4, 0],
      ]);
      // The dropped ranks' bookings are gone (their ids are free again), the kept ones still live.
      await expectOk(add({ model }, "r0", 1, 2, [9], 1), 201);
      await expectError(add({ model }, "r3", 1, 4, [9], 1), 409, /Request r3 already exists/);
      await patchWorker(1, { data_parallel_start_rank: 0, data_parallel_size: 5 });
      expect((await loadRows(model)).map(([, rank, tokens]) => [rank, tokens])).toEqual([
        [0, 0],
        [1, 0],
        [2, 13],
        [3, 13],
        [4, 0],
      ]);
    },
  );
});

describe("worker ids service-wide", () => {
  itBooking(
    "moves a worker to the partition a POST names, out of its old one and its bookings there",
    async () => {
      const model = uniqueModel("move");
      const id = 90_000_000 + Math.floor(Math.random() * 1e6);
      await postWorker(complete(model, id, { routing_group: "a" }));
      await expectOk(add({ model, tenant: "a" }, "ra", id, 0, [1], 5), 201);
      const moved = await recordOf(postWorker(complete(model, id, { routing_group: "b" })));
      expect(moved).toMatchObject({ status: 201, record: { routing_group: "b", lifecycle: "schedulable" } });
      expect((await catalogOf({ model_name: model })).map((r) => [r.routing_group, r.worker_id])).toEqual([
        ["b", id],
      ]);
      expect(await loadsOf({ model, tenant: "a" })).toEqual([]);
      // PATCH and DELETE find it in its new partition by id alone.
      expect((await recordOf(patchWorker(id, { data_parallel_size: 2 }))).record.routing_group).toBe("b");
      expect((await recordOf(deleteWorker(id))).record).toMatchObject({
        routing_group: "b",
        data_parallel_size: 2,
      });
      expect(await catalogText(model, "b")).toBe("[]");
    },
  );

  it("moves a /register'ed worker too: the selection API's id names it whatever registered it", async () => {
    const model = uniqueModel("move");
    const id = 91_000_000 + Math.floor(Math.random() * 1e6);
    await expectOk(register({ model, tenant: "legacy" }, id), 201);
    await postWorker(complete(model, id, { routing_group: "new" }));
    expect((await catalogOf({ model_name: model })).map((r) => r.routing_group)).toEqual(["new"]);
    expect(await workersOf({ model, tenant: "legacy" })).toEqual([]);
  });
});
