/**
 * GET /health, and the worker registry over HTTP: POST /register and POST /unregister answer with
 * Dynamo's statuses and texts, refuse bad ranges, block sizes and duplicates without a change, and an
 * unregister drops the worker's requests and, with the last worker, the tracker itself.
 */
import { describe, expect, it } from "vitest";
import {
  add,
  expectError,
  expectOk,
  get,
  itBooking,
  loadsOf,
  okJson,
  post,
  register,
  requestOp,
  stateText,
  uniqueModel,
  workersOf,
} from "./api-http";
import { load } from "./api-rows";

describe("GET /health", () => {
  it("answers 200 with an empty body, as Dynamo does", async () => {
    const res = await get("/health");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
  });
});

describe("POST /register and POST /unregister", () => {
  it("registers a worker with 201 {status: ok} and lists it in /workers and its ranks in /loads", async () => {
    const model = uniqueModel();
    await expectOk(register({ model }, 1, { blockSize: 16, dpStart: 0, dpSize: 2 }), 201);
    expect(await workersOf({ model })).toEqual([
      { worker_id: 1, model_name: model, tenant_id: "default", block_size: 16, dp_start: 0, dp_size: 2 },
    ]);
    expect(await loadsOf({ model })).toEqual([load(model, "default", 1, 0), load(model, "default", 1, 1)]);
  });

  it("refuses block_size 0, dp_size 0 and a dp range past u32 with 400 and Dynamo's texts, creating nothing", async () => {
    const model = uniqueModel();
    await expectError(register({ model }, 1, { blockSize: 0 }), 400, "block_size must be greater than 0");
    // The block size is checked first, as in Dynamo.
    await expectError(
      register({ model }, 1, { blockSize: 0, dpSize: 0 }),
      400,
      "block_size must be greater than 0",
    );
    await expectError(register({ model }, 1, { dpSize: 0 }), 400, "dp_size must be greater than 0");
    await expectError(
      register({ model }, 1, { dpStart: 4294967295, dpSize: 1 }),
      400,
      "dp range overflows u32: start=4294967295 size=1",
    );
    await expectError(
      register({ model }, 1, { dpStart: 2, dpSize: 4294967295 }),
      400,
      "dp range overflows u32: start=2 size=4294967295",
    );
    expect(await workersOf({ model })).toEqual([]);
    expect(await loadsOf({ model })).toEqual([]);
    // None of the refusals fixed a block size: the tracker was never created.
    await expectOk(register({ model }, 1, { blockSize: 64 }), 201);
  });

  it("accepts the highest rank below the u32 limit", async () => {
    const model = uniqueModel();
    await expectOk(register({ model }, 1, { dpStart: 4294967294, dpSize: 1 }), 201);
    expect(await loadsOf({ model })).toEqual([load(model, "default", 1, 4294967294)]);
  });

  it("refuses a second block size with 409 block_size mismatch, naming model and tenant", async () => {
    const model = uniqueModel();
    await expectOk(register({ model }, 1, { blockSize: 16 }), 201);
    const before = await stateText({ model });
    await expectError(
      register({ model }, 2, { blockSize: 32 }),
      409,
      `block_size mismatch for model=${model} tenant=default: existing=16, requested=32`,
    );
    await expectOk(register({ model, tenant: "acme" }, 1, { blockSize: 16 }), 201);
    await expectError(
      register({ model, tenant: "acme" }, 3, { blockSize: 32 }),
      409,
      `block_size mismatch for model=${model} tenant=acme: existing=16, requested=32`,
    );
    expect(await stateText({ model })).toBe(before);
  });

  it("refuses a worker id already registered with 409, even with a different range", async () => {
    const model = uniqueModel();
    await expectOk(register({ model }, 1, { dpStart: 0, dpSize: 1 }), 201);
    const before = await stateText({ model });
    const text = `worker 1 already registered for model=${model} tenant=default`;
    await expectError(register({ model }, 1, { dpStart: 0, dpSize: 1 }), 409, text);
    await expectError(register({ model }, 1, { dpStart: 4, dpSize: 2 }), 409, text);
    expect(await stateText({ model })).toBe(before);
  });

  itBooking("keeps the same worker id in two tenants as two workers of two trackers", async () => {
    const model = uniqueModel();
    await expectOk(register({ model, tenant: "a" }, 1, { blockSize: 16 }), 201);
    await expectOk(register({ model, tenant: "b" }, 1, { blockSize: 32, dpSize: 2 }), 201);
    await expectOk(add({ model, tenant: "a" }, "r", 1, 0, [1, 2], 3), 201);
    expect(await loadsOf({ model, tenant: "a" })).toEqual([load(model, "a", 1, 0, 3, 2)]);
    expect(await loadsOf({ model, tenant: "b" })).toEqual([load(model, "b", 1, 0), load(model, "b", 1, 1)]);
    await expectOk(post("/unregister", { model_name: model, tenant_id: "b", worker_id: 1 }), 200);
    expect(await loadsOf({ model, tenant: "a" })).toEqual([load(model, "a", 1, 0, 3, 2)]);
  });

  it("unregisters with 200; an unknown worker is 404, also when the tracker does not exist", async () => {
    const model = uniqueModel();
    const notFound = `worker 9 not found for model=${model} tenant=default`;
    await expectError(post("/unregister", { model_name: model, worker_id: 9 }), 404, notFound);
    await expectOk(register({ model }, 1), 201);
    await expectOk(register({ model }, 2), 201);
    await expectError(post("/unregister", { model_name: model, worker_id: 9 }), 404, notFound);
    await expectOk(post("/unregister", { model_name: model, worker_id: 1 }), 200);
    expect(await workersOf({ model })).toEqual([
      { worker_id: 2, model_name: model, tenant_id: "default", block_size: 16, dp_start: 0, dp_size: 1 },
    ]);
    await expectError(
      post("/unregister", { model_name: model, worker_id: 1 }),
      404,
      `worker 1 not found for model=${model} tenant=default`,
    );
  });

  itBooking(
    "drops an unregistered worker's live requests: their blocks go, free is 200 and prefill_complete 404",
    async () => {
      const model = uniqueModel();
      await expectOk(register({ model }, 1), 201);
      await expectOk(register({ model }, 2), 201);
      await expectOk(add({ model }, "r1", 1, 0, [1, 2], 5), 201);
      await expectOk(add({ model }, "r2", 2, 0, [1], 7), 201);
      await expectOk(post("/unregister", { model_name: model, worker_id: 1 }), 200);
      expect(await loadsOf({ model })).toEqual([load(model, "default", 2, 0, 7, 1)]);
      await expectError(requestOp("/prefill_complete", { model }, "r1"), 404, "Request r1 not found");
      await expectOk(requestOp("/free", { model }, "r1"), 200);
      // The id is free again, and the worker comes back empty.
      await expectOk(register({ model }, 1), 201);
      await expectOk(add({ model }, "r1", 1, 0, [9], 1), 201);
      expect(await loadsOf({ model })).toEqual([
        load(model, "default", 1, 0, 1, 1),
        load(model, "default", 2, 0, 7, 1),
      ]);
    },
  );

  itBooking(
    "deletes the tracker with its last worker: add then gets no slot tracker, and another block size is accepted",
    async () => {
      const model = uniqueModel();
      await expectOk(register({ model }, 1, { blockSize: 16, dpSize: 2 }), 201);
      await expectOk(add({ model }, "r", 1, 1, [1, 2, 3], 8), 201);
      await expectOk(post("/unregister", { model_name: model, worker_id: 1 }), 200);
      await expectError(
        add({ model }, "r2", 1, 0, [1], 1),
        404,
        `no slot tracker for model=${model} tenant=default`,
      );
      await expectError(
        requestOp("/free", { model }, "r"),
        404,
        `no slot tracker for model=${model} tenant=default`,
      );
      expect(await workersOf({ model })).toEqual([]);
      expect(await loadsOf({ model })).toEqual([]);
      expect(await okJson(get("/workers", { model_name: model }))).toEqual([]);

      await expectOk(register({ model }, 1, { blockSize: 32, dpSize: 1 }), 201);
      expect(await workersOf({ model })).toEqual([
        { worker_id: 1, model_name: model, tenant_id: "default", block_size: 32, dp_start: 0, dp_size: 1 },
      ]);
      // Nothing of the old tracker survived: no load, and the old request id is not a duplicate.
      expect(await loadsOf({ model })).toEqual([load(model, "default", 1, 0)]);
      await expectOk(add({ model }, "r", 1, 0, [1], 2), 201);
      expect(await loadsOf({ model })).toEqual([load(model, "default", 1, 0, 2, 1)]);
    },
  );
});
