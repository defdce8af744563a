/**
 * `routing_group`, Dynamo's later name for `tenant_id`: accepted in every body and query in its place,
 * and refused with 400 naming both fields when the two are sent and differ.
 */
import { describe, expect } from "vitest";
import {
  expectError,
  expectOk,
  get,
  itBooking,
  okJson,
  post,
  register,
  stateText,
  uniqueModel,
} from "./api-http";
import { load } from "./api-rows";

describe("routing_group, the alias of tenant_id", () => {
  itBooking("is accepted in bodies and queries in place of tenant_id", async () => {
    const model = uniqueModel();
    const group = `g-${crypto.randomUUID()}`;
    await expectOk(
      post("/register", {
        model_name: model,
        routing_group: group,
        worker_id: 1,
        block_size: 16,
        dp_start: 0,
        dp_size: 1,
      }),
      201,
    );
    await expectOk(
      post("/add", {
        model_name: model,
        routing_group: group,
        request_id: "r",
        worker_id: 1,
        dp_rank: 0,
        sequence_hashes: [1, 2],
        new_isl_tokens: 4,
      }),
      201,
    );
    // Both spellings given and equal is fine.
    await expectOk(
      post("/prefill_complete", {
        model_name: model,
        tenant_id: group,
        routing_group: group,
        request_id: "r",
      }),
      200,
    );
    expect(
      await okJson(
        post("/potential_loads", { model_name: model, routing_group: group, sequence_hashes: [1] }),
      ),
    ).toEqual([
      {
        worker_id: 1,
        dp_rank: 0,
        potential_prefill_tokens: 0,
        potential_decode_blocks: 2,
        active_requests: 1,
      },
    ]);
    const rows = [load(model, group, 1, 0, 0, 2)];
    expect(await okJson(get("/loads", { model_name: model, routing_group: group }))).toEqual(rows);
    expect(await okJson(get("/loads", { routing_group: group }))).toEqual(rows);
    expect(
      await okJson(get("/loads", { model_name: model, tenant_id: group, routing_group: group })),
    ).toEqual(rows);
    expect(await okJson(get("/workers", { routing_group: group }))).toEqual([
      { worker_id: 1, model_name: model, tenant_id: group, block_size: 16, dp_start: 0, dp_size: 1 },
    ]);
    await expectOk(post("/free", { model_name: model, routing_group: group, request_id: "r" }), 200);
    await expectOk(post("/unregister", { model_name: model, routing_group: group, worker_id: 1 }), 200);
    expect(await okJson(get("/workers", { routing_group: group }))).toEqual([]);
  });

  itBooking(
    "answers 400 naming both fields when tenant_id and routing_group differ, in bodies and queries",
    async () => {
      const model = uniqueModel();
      await expectOk(register({ model, tenant: "a" }, 1), 201);
      await expectOk(register({ model, tenant: "b" }, 1), 201);
      const before = [await stateText({ model, tenant: "a" }), await stateText({ model, tenant: "b" })];
      const both = /tenant_id.*routing_group|routing_group.*tenant_id/;
      const scope = { model_name: model, tenant_id: "a", routing_group: "b" };
      await expectError(
        post("/register", { ...scope, worker_id: 2, block_size: 16, dp_start: 0, dp_size: 1 }),
        400,
        both,
      );
      await expectError(post("/unregister", { ...scope, worker_id: 1 }), 400, both);
      await expectError(
        post("/add", { ...scope, request_id: "r", worker_id: 1, dp_rank: 0, sequence_hashes: [1] }),
        400,
        both,
      );
      await expectError(post("/prefill_complete", { ...scope, request_id: "r" }), 400, both);
      await expectError(post("/free", { ...scope, request_id: "r" }), 400, both);
      await expectError(post("/potential_loads", { ...scope, sequence_hashes: [1] }), 400, both);
      await expectError(get("/workers", scope), 400, both);
      await expectError(get("/loads", scope), 400, both);
      await expectError(get("/loads", { tenant_id: "a", routing_group: "b" }), 400, both);
      expect([await stateText({ model, tenant: "a" }), await stateText({ model, tenant: "b" })]).toEqual(
        before,
      );
    },
  );
});
