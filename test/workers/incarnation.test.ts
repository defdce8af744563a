/**
 * Worker incarnations over HTTP, on real objects: a worker that comes back with a higher incarnation
 * takes its own place at once (its stale bookings gone from `/loads`), an equal or missing one is
 * today's 409, the incarnation survives a reset of the object and a database written before it
 * existed, and the catalog's upsert drops a record's bookings the same way.
 */
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { postExact, readExact, selectionClient, slotTrackerClient } from "../../src/client";
import { u64ToBlob } from "../../durable-objects/storage/u64";
import { add, expectError, expectOk, get, loadsOf, post, stateText, uniqueModel } from "./api-http";
import { viaWorker } from "./client-calls";
import { trackerStub } from "./helpers";

const registration = (model: string, workerId: number, more: Record<string, unknown> = {}) => ({
  model_name: model,
  worker_id: workerId,
  block_size: 16,
  dp_start: 0,
  dp_size: 2,
  ...more,
});

/** Active prefill tokens per (worker, rank), in listing order. */
async function prefill(model: string): Promise<string[]> {
  const rows = (await loadsOf({ model })) as {
    worker_id: number;
    dp_rank: number;
    active_prefill_tokens: number;
  }[];
  return rows.map((r) => `${r.worker_id}/${r.dp_rank}:${r.active_prefill_tokens}`);
}

const workersText = async (model: string) => (await get("/workers", { model_name: model })).text();

describe("worker incarnations over HTTP", () => {
  it("replaces a worker with live bookings when it re-registers with incarnation + 1: its bookings are gone at once", async () => {
    const model = uniqueModel("incarn");
    await expectOk(post("/register", registration(model, 1, { incarnation: 4 })), 201);
    await expectOk(post("/register", registration(model, 2, { dp_size: 1 })), 201);
    await expectOk(add({ model }, "a", 1, 0, [1, 2], 30), 201);
    await expectOk(add({ model }, "b", 1, 1, [3], 20), 201);
    await expectOk(add({ model }, "c", 2, 0, [4], 5), 201);
    expect(await prefill(model)).toEqual(["1/0:30", "1/1:20", "2/0:5"]);

    // Answered as a fresh registration is, with its own new range.
    await expectOk(
      post("/register", registration(model, 1, { dp_start: 4, dp_size: 1, incarnation: 5 })),
      201,
    );
    expect(await prefill(model)).toEqual(["1/4:0", "2/0:5"]);
    expect(await workersText(model)).toBe(
      `[{"worker_id":1,"model_name":"${model}","tenant_id":"default","block_size":16,"dp_start":4,"dp_size":1,"incarnation":5},` +
        `{"worker_id":2,"model_name":"${model}","tenant_id":"default","block_size":16,"dp_start":0,"dp_size":1}]`,
    );
    // The stale ids are free for the new life.
    await expectOk(add({ model }, "a", 1, 4, [1], 1), 201);
  });

  it("keeps today's 409 for an equal, lower or missing incarnation, changing nothing", async () => {
    const model = uniqueModel("incarn");
    await expectOk(post("/register", registration(model, 1, { incarnation: 3 })), 201);
    await expectOk(add({ model }, "a", 1, 0, [1], 8), 201);
    const before = await stateText({ model });
    for (const more of [{ incarnation: 3 }, { incarnation: 2 }, {}]) {
      await expectError(
        post("/register", registration(model, 1, { dp_size: 1, ...more })),
        409,
        `worker 1 already registered for model=${model} tenant=default`,
      );
    }
    expect(await stateText({ model })).toBe(before);
  });

  it("takes the incarnation in the routing_group generation too, and a u64 above 2^53 exactly", async () => {
    const model = uniqueModel("incarn");
    const big = (1n << 64n) - 1n;
    await expectOk(
      post("/register", { ...registration(model, 1), routing_group: "g", incarnation: big - 1n }),
      201,
    );
    await expectOk(
      post("/add", {
        model_name: model,
        routing_group: "g",
        request_id: "a",
        worker_id: 1,
        dp_rank: 0,
        sequence_hashes: [1],
        new_isl_tokens: 9,
      }),
      201,
    );
    await expectOk(
      post("/register", { ...registration(model, 1), routing_group: "g", incarnation: big }),
      201,
    );
    const text = await (await get("/workers", { model_name: model, routing_group: "g" })).text();
    expect(text).toMatch(/"incarnation":18446744073709551615}]$/);
    expect(await (await get("/loads", { model_name: model, routing_group: "g" })).text()).not.toContain(
      '"active_prefill_tokens":9',
    );
  });

  it("is sent and listed by the typed client, exactly", async () => {
    const client = slotTrackerClient("http://tracker", { fetch: viaWorker });
    const model = uniqueModel("incarn");
    const incarnation = (1n << 64n) - 5n;
    const res = await postExact(client.register.$post, { ...registration(model, 1), incarnation });
    expect(res.status).toBe(201);
    const [listed] = await readExact(await client.workers.$get({ query: { model_name: model } }));
    expect(listed?.incarnation).toBe(incarnation);
  });
});

describe("worker incarnations across a reset", () => {
  it("keep the registered incarnation: after the reset an equal one is still the duplicate and a higher one replaces", async () => {
    const model = uniqueModel("incarn");
    await expectOk(post("/register", registration(model, 1, { incarnation: 3 })), 201);
    await expectOk(add({ model }, "a", 1, 1, [1], 8), 201);
    const before = await workersText(model);

    await abortAllDurableObjects();
    expect(await workersText(model)).toBe(before);
    expect(before).toContain('"incarnation":3}');
    await expectError(
      post("/register", registration(model, 1, { incarnation: 3 })),
      409,
      `worker 1 already registered for model=${model} tenant=default`,
    );
    await expectOk(post("/register", registration(model, 1, { incarnation: 4 })), 201);

    await abortAllDurableObjects();
    expect(await prefill(model)).toEqual(["1/0:0", "1/1:0"]);
    expect(await workersText(model)).toContain('"incarnation":4}');
  });

  it("reads a worker stored before incarnations existed as incarnation 0", async () => {
    const model = uniqueModel("incarn");
    const stub = trackerStub({ model, tenant: "default", replica: "primary" });
    // `workers` as released before incarnations, with one worker and one booking.
    await expectOk(post("/register", registration(model, 9)), 201);
    await expectOk(add({ model }, "a", 9, 0, [1], 8), 201);
    await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      sql.exec("DELETE FROM workers");
      sql.exec("ALTER TABLE workers DROP COLUMN incarnation");
      sql.exec(
        "INSERT INTO workers (worker_id, block_size, dp_start, dp_size, key_ts, key_origin) VALUES (?, 16, 0, 2, 0, '')",
        u64ToBlob(9n),
      );
    });
    await abortAllDurableObjects();
    expect(await prefill(model)).toEqual(["9/0:8", "9/1:0"]);
    expect(await workersText(model)).not.toContain("incarnation");
    await expectError(
      post("/register", registration(model, 9, { incarnation: 0 })),
      409,
      `worker 9 already registered for model=${model} tenant=default`,
    );
    await expectOk(post("/register", registration(model, 9, { incarnation: 1 })), 201);
    expect(await prefill(model)).toEqual(["9/0:0", "9/1:0"]);
  });
});

describe("catalog incarnations over HTTP", () => {
  it("drop every booking of the worker on an upsert with a higher incarnation, and list it last", async () => {
    const sel = selectionClient("http://tracker", { fetch: viaWorker });
    const model = uniqueModel("incarn");
    const worker = {
      worker_id: 70,
      model_name: model,
      endpoint: "http://w70",
      block_size: 16,
      data_parallel_size: 2,
    };
    await sel.upsertWorker({ ...worker, incarnation: 1 });
    await expectOk(add({ model }, "a", 70, 0, [1], 8), 201);
    await expectOk(add({ model }, "b", 70, 1, [2], 6), 201);
    // Equal: today's upsert, bookings on the ranks both ranges share stay.
    await sel.upsertWorker({ ...worker, incarnation: 1 });
    expect(await prefill(model)).toEqual(["70/0:8", "70/1:6"]);
    const record = await sel.upsertWorker({ ...worker, incarnation: 2 });
    expect(record.incarnation).toBe(2);
    expect(await prefill(model)).toEqual(["70/0:0", "70/1:0"]);
    const listed = await (await get("/selection/workers", { model_name: model })).text();
    expect(listed).toMatch(/"kv_transfer_preferred_weight":null,"incarnation":2}]$/);
  });
});
