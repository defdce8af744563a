import { decode, encode } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";
import { call, expectError, get, post, uniqueModel } from "./api-http";
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
 * The catalog routes under `/selection` over HTTP into real objects: statuses, answers in Dynamo's
 * shape, error texts, both body encodings, and that refused calls change nothing.
 */

const BIG = 18446744073709551557n;

describe("POST /selection/workers", () => {
  it("answers 201 with the judged record, also for an incomplete one", async () => {
    const model = uniqueModel("sel");
    const incomplete = await recordOf(postWorker({ worker_id: BIG, model_name: model }));
    expect(incomplete.status).toBe(201);
    expect(incomplete.record).toMatchObject({
      worker_id: BIG,
      model_name: model,
      routing_group: "default",
      lifecycle: "incomplete",
      endpoint: null,
      not_schedulable_reasons: ["endpoint is required", "block_size must be greater than 0"],
    });
    const ready = await recordOf(postWorker(complete(model, 2, { data_parallel_size: 2 })));
    expect(ready).toMatchObject({ status: 201, record: { lifecycle: "schedulable", data_parallel_size: 2 } });
    expect("not_schedulable_reasons" in ready.record).toBe(false);
  });

  it("writes the record's fields in Dynamo's order, absent ones as null", async () => {
    const model = uniqueModel("sel");
    const res = await postWorker(complete(model, 1));
    expect(res.status).toBe(201);
    expect(Object.keys(JSON.parse(await res.text()))).toEqual([
      "worker_id",
      "model_name",
      "routing_group",
      "lifecycle",
      "endpoint",
      "kv_events_endpoint",
      "replay_endpoint",
      "block_size",
      "data_parallel_start_rank",
      "data_parallel_size",
      "max_num_batched_tokens",
      "total_kv_blocks",
      "stable_routing_id",
      "is_eagle",
      "taints",
      "topology_domains",
      "kv_transfer_domain",
      "kv_transfer_enforcement",
      "kv_transfer_preferred_weight",
    ]);
  });

  it("takes MessagePack and answers it when Accept asks", async () => {
    const model = uniqueModel("sel");
    const res = await call("POST", "/selection/workers", {
      body: encode(
        { worker_id: BIG, model_name: model, endpoint: "http://w", block_size: 16 },
        { useBigInt64: true },
      ),
      headers: { "content-type": "application/msgpack", accept: "application/msgpack" },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/msgpack");
    const record = decode(new Uint8Array(await res.arrayBuffer()), { useBigInt64: true }) as Record<
      string,
      unknown
    >;
    expect(record).toMatchObject({ worker_id: BIG, lifecycle: "schedulable" });
  });

  it("refuses a body without worker_id (422), malformed JSON (400) and another content type (415), storing nothing", async () => {
    const model = uniqueModel("sel");
    await postWorker(complete(model, 1));
    const before = await catalogText(model);
    await expectError(postWorker({ model_name: model }), 422, /missing field `worker_id`/);
    await expectError(postWorker('{"worker_id": 3,'), 400, /.+/);
    await expectError(postWorker({ worker_id: -1, model_name: model }), 422, /worker_id/);
    await expectError(
      call("POST", "/selection/workers", { body: "x", headers: { "content-type": "text/plain" } }),
      415,
      /unsupported content type/,
    );
    expect(await catalogText(model)).toBe(before);
  });

  it("refuses a record over the text budget with 413", async () => {
    const model = uniqueModel("sel");
    await expectError(
      postWorker(
        complete(model, 1, {
          taints: [
            "t".repeat(2048),
            "u".repeat(2048),
            "v".repeat(2048),
            "w".repeat(2048),
            "x".repeat(2048),
            "y".repeat(2048),
            "z".repeat(2048),
            "q".repeat(2048),
            "r".repeat(2048),
          ],
        }),
      ),
      413,
      /worker record too large/,
    );
    expect(await catalogOf({ model_name: model })).toEqual([]);
  });
});

describe("GET /selection/workers", () => {
  it("filters by model and routing group and sorts by (model, group, worker id)", async () => {
    const model = uniqueModel("sel");
    await postWorker(complete(model, 9, { routing_group: "b" }));
    await postWorker(complete(model, 7, { routing_group: "a" }));
    await postWorker(complete(model, 3, { routing_group: "b" }));
    const all = await catalogOf({ model_name: model });
    expect(all.map((r) => [r.routing_group, r.worker_id])).toEqual([
      ["a", 7],
      ["b", 3],
      ["b", 9],
    ]);
    expect((await catalogOf({ model_name: model, routing_group: "b" })).map((r) => r.worker_id)).toEqual([
      3, 9,
    ]);
    expect(await catalogOf({ model_name: model, routing_group: "" })).toEqual([]);
  });
});

describe("PATCH /selection/workers/{id}", () => {
  it("replaces the fields given and answers 200 with the record judged afresh", async () => {
    const model = uniqueModel("sel");
    await postWorker({ worker_id: 5, model_name: model, block_size: 16 });
    const patched = await recordOf(patchWorker(5, { endpoint: "http://w5", taints: ["gpu"] }));
    expect(patched).toMatchObject({
      status: 200,
      record: { lifecycle: "schedulable", endpoint: "http://w5", block_size: 16 },
    });
    const again = await recordOf(patchWorker(5, { endpoint: null }));
    expect(again.record.endpoint).toBe("http://w5");
  });

  it("answers 404 for an unknown id and 400 for an id that is no u64, changing nothing", async () => {
    const model = uniqueModel("sel");
    await postWorker(complete(model, 1));
    const before = await catalogText(model);
    await expectError(patchWorker(424242424242, { endpoint: "x" }), 404, "worker 424242424242 not found");
    await expectError(
      patchWorker("abc", { endpoint: "x" }),
      400,
      "Invalid URL: Cannot parse `abc` to a `u64`",
    );
    await expectError(patchWorker("18446744073709551616", {}), 400, /Cannot parse/);
    await expectError(patchWorker(1, { block_size: "sixteen" }), 422, /block_size/);
    expect(await catalogText(model)).toBe(before);
  });
});

describe("DELETE /selection/workers/{id}", () => {
  it("answers 200 with the final unschedulable record and forgets the worker; a second delete is 404", async () => {
    const model = uniqueModel("sel");
    const id = 100_000_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e9));
    await postWorker(complete(model, id));
    const removed = await recordOf(deleteWorker(id));
    expect(removed).toMatchObject({ status: 200, record: { worker_id: id, lifecycle: "unschedulable" } });
    expect("not_schedulable_reasons" in removed.record).toBe(false);
    expect(await catalogOf({ model_name: model })).toEqual([]);
    await expectError(deleteWorker(id), 404, `worker ${id} not found`);
  });
});

describe("the selection router's fallbacks", () => {
  it("answers an unknown route 404 and a wrong method 405 with JSON, as at the root", async () => {
    await expectError(get("/selection/nope"), 404, "route not found");
    await expectError(call("PUT", "/selection/workers/7"), 405, "method not allowed");
    expect((await call("PUT", "/selection/workers/7")).headers.get("allow")).toBe("PATCH, DELETE");
    await expectError(call("DELETE", "/selection/workers"), 405, "method not allowed");
    await expectError(post("/selection/health", {}), 405, "method not allowed");
  });
});
