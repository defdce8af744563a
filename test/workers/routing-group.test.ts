/**
 * Requests of Dynamo's second-generation slot-tracker API (SPEC §3.1): `routing_group` for
 * `tenant_id` in every body (JSON and MessagePack, `/batch` and `/route` too) and in the `/workers`
 * and `/loads` queries, naming the same tracker; names that disagree, and bad values, refused with a
 * 4xx that changes nothing. Answers in the partition's two names are in `partition-field.test.ts`.
 */
import { describe, expect } from "vitest";
import { slotTrackerClient } from "../../src/client";
import { expectError, expectOk, itBooking, okJson, uniqueModel } from "./api-http";
import { load } from "./api-rows";
import { type Deployment, firstGeneration as v1, secondGeneration as v2 } from "./deployments";

const worker = (model: string, group: string, id: number, extra: Record<string, unknown> = {}) => ({
  model_name: model,
  routing_group: group,
  worker_id: id,
  block_size: 16,
  dp_start: 0,
  dp_size: 1,
  ...extra,
});

/** The raw `/workers` and `/loads` of (model, tenant) and of the whole model: what a refusal must keep. */
async function stateOf(at: Deployment, model: string, tenant: string): Promise<string> {
  const texts: string[] = [];
  for (const path of ["/workers", "/loads"]) {
    const queries: Record<string, string>[] = [
      { model_name: model, tenant_id: tenant },
      { model_name: model },
    ];
    for (const query of queries) {
      const res = await at.get(path, query);
      expect(res.status).toBe(200);
      texts.push(await res.text());
    }
  }
  return texts.join("\n");
}

describe("routing_group in requests", () => {
  itBooking(
    "is taken by every route, in JSON and MessagePack bodies and in the listing queries",
    async () => {
      const model = uniqueModel("gen2");
      const g = `g-${crypto.randomUUID()}`;
      const scope = { model_name: model, routing_group: g };
      await expectOk(v1.post("/register", worker(model, g, 1)), 201);
      await expectOk(v1.postMsgpack("/register", worker(model, g, 2)), 201);
      const add = { request_id: "a", worker_id: 1, dp_rank: 0, sequence_hashes: [1, 2], new_isl_tokens: 5 };
      await expectOk(v1.post("/add", { ...scope, ...add }), 201);
      await expectOk(v1.postMsgpack("/add", { ...scope, ...add, request_id: "b", worker_id: 2 }), 201);
      await expectOk(v1.postMsgpack("/prefill_complete", { ...scope, request_id: "b" }), 200);
      await expectOk(v1.post("/prefill_complete", { ...scope, request_id: "a" }), 200);
      expect(await okJson(v1.post("/potential_loads", { ...scope, sequence_hashes: [1, 2, 3] }))).toEqual([
        {
          worker_id: 1,
          dp_rank: 0,
          potential_prefill_tokens: 0,
          potential_decode_blocks: 3,
          active_requests: 1,
        },
        {
          worker_id: 2,
          dp_rank: 0,
          potential_prefill_tokens: 0,
          potential_decode_blocks: 3,
          active_requests: 1,
        },
      ]);
      const batchOps = [
        { op: "add", request_id: "c", worker_id: 1, dp_rank: 0, sequence_hashes: [9] },
        { op: "free", request_id: "c" },
      ];
      const twoOk = { results: [{ status: 201 }, { status: 200 }] };
      expect(await okJson(v1.post("/batch", { ...scope, ops: batchOps }))).toEqual(twoOk);
      expect(await okJson(v1.postMsgpack("/batch", { ...scope, ops: batchOps }))).toEqual(twoOk);
      const routed = await v1.post("/route", { ...scope, request_id: "d", sequence_hashes: [1, 2] });
      expect(routed.status).toBe(201);
      const rows = [load(model, g, 1, 0, 0, 2), load(model, g, 2, 0, 0, 2)];
      const filters: Record<string, string>[] = [
        { model_name: model, routing_group: g },
        { routing_group: g },
      ];
      await expectOk(v1.post("/free", { ...scope, request_id: "d" }), 200);
      for (const query of filters) expect(await okJson(v1.get("/loads", query))).toEqual(rows);
      const workers = [1, 2].map((id) => ({
        worker_id: id,
        model_name: model,
        tenant_id: g,
        block_size: 16,
        dp_start: 0,
        dp_size: 1,
      }));
      for (const query of filters) expect(await okJson(v1.get("/workers", query))).toEqual(workers);
      expect(await okJson(v1.get("/replica_sync/peers", { model_name: model, routing_group: g }))).toEqual({
        replica: "primary",
        peers: [],
      });
      await expectOk(v1.postMsgpack("/free", { ...scope, request_id: "a" }), 200);
      await expectOk(v1.post("/free", { ...scope, request_id: "b" }), 200);
      await expectOk(v1.postMsgpack("/unregister", { ...scope, worker_id: 2 }), 200);
      await expectOk(v1.post("/unregister", { ...scope, worker_id: 1 }), 200);
      expect(await okJson(v1.get("/workers", { routing_group: g }))).toEqual([]);
    },
  );

  itBooking(
    "names one tracker with either name: a tenant_id booking is seen and freed as routing_group",
    async () => {
      const model = uniqueModel("gen2");
      const g = `g-${crypto.randomUUID()}`;
      const registration = {
        model_name: model,
        tenant_id: g,
        worker_id: 1,
        block_size: 16,
        dp_start: 0,
        dp_size: 2,
      };
      await expectOk(v1.post("/register", registration), 201);
      const booking = {
        request_id: "r",
        worker_id: 1,
        dp_rank: 1,
        sequence_hashes: [4, 5, 6],
        new_isl_tokens: 7,
      };
      await expectOk(v1.post("/add", { model_name: model, tenant_id: g, ...booking }), 201);
      const booked = [load(model, g, 1, 0), load(model, g, 1, 1, 7, 3)];
      expect(await okJson(v1.get("/loads", { model_name: model, routing_group: g }))).toEqual(booked);
      // Second-generation rows, same tracker: only the key's name differs.
      expect(await okJson(v2.get("/loads", { model_name: model, tenant_id: g }))).toEqual(
        booked.map(({ tenant_id, ...row }) => ({ ...row, routing_group: tenant_id })),
      );
      const seen = await okJson(
        v1.post("/potential_loads", { model_name: model, routing_group: g, sequence_hashes: [] }),
      );
      expect(seen).toMatchObject([
        { dp_rank: 0, active_requests: 0 },
        { dp_rank: 1, active_requests: 1 },
      ]);
      await expectError(
        v1.postMsgpack("/add", { model_name: model, routing_group: g, ...booking }),
        409,
        "Request r already exists (assigned to worker WorkerWithDpRank { worker_id: 1, dp_rank: 1 })",
      );
      await expectOk(
        v1.post("/prefill_complete", { model_name: model, routing_group: g, request_id: "r" }),
        200,
      );
      await expectOk(v1.postMsgpack("/free", { model_name: model, routing_group: g, request_id: "r" }), 200);
      const idle = [load(model, g, 1, 0), load(model, g, 1, 1)];
      expect(await okJson(v1.get("/loads", { model_name: model, tenant_id: g }))).toEqual(idle);
      // Freed, not merely hidden: the same id books again, and the other way round frees it.
      await expectOk(v1.post("/add", { model_name: model, routing_group: g, ...booking }), 201);
      await expectOk(v1.post("/free", { model_name: model, tenant_id: g, request_id: "r" }), 200);
      expect(await okJson(v1.get("/loads", { model_name: model, routing_group: g }))).toEqual(idle);
    },
  );

  itBooking("is one name with tenant_id when both agree, and a null routing_group is no name", async () => {
    const model = uniqueModel("gen2");
    const both = { model_name: model, tenant_id: "same", routing_group: "same" };
    await expectOk(v1.postMsgpack("/register", { ...worker(model, "same", 1), ...both }), 201);
    await expectOk(
      v1.post("/add", { ...both, request_id: "r", worker_id: 1, dp_rank: 0, sequence_hashes: [1] }),
      201,
    );
    expect(
      await okJson(v1.get("/loads", { model_name: model, tenant_id: "same", routing_group: "same" })),
    ).toEqual([load(model, "same", 1, 0, 0, 1)]);
    // null reads as absent: the default partition, which has no tracker here.
    await expectError(
      v1.post("/free", { model_name: model, routing_group: null, request_id: "r" }),
      404,
      `no slot tracker for model=${model} tenant=default`,
    );
    await expectOk(
      v1.post("/free", { model_name: model, tenant_id: null, routing_group: "same", request_id: "r" }),
      200,
    );
    expect(await okJson(v1.get("/loads", { model_name: model, routing_group: "same" }))).toEqual([
      load(model, "same", 1, 0),
    ]);
  });

  itBooking(
    "refuses names that disagree with 400 naming both, on every route and encoding, changing nothing",
    async () => {
      const model = uniqueModel("gen2");
      await expectOk(v1.post("/register", worker(model, "a", 1)), 201);
      await expectOk(
        v1.post("/add", {
          model_name: model,
          routing_group: "a",
          request_id: "r",
          worker_id: 1,
          dp_rank: 0,
          sequence_hashes: [1],
        }),
        201,
      );
      const before = [await stateOf(v1, model, "a"), await stateOf(v1, model, "b")];
      const scope = { model_name: model, tenant_id: "a", routing_group: "b" };
      const both = "fields `tenant_id` and `routing_group` are aliases but differ; send one of them";
      const add = { ...scope, request_id: "s", worker_id: 1, dp_rank: 0, sequence_hashes: [2] };
      const calls: [string, (at: Deployment) => Promise<Response>][] = [
        [
          "register, MessagePack",
          (at) => at.postMsgpack("/register", { ...worker(model, "b", 2), ...scope }),
        ],
        ["add, MessagePack", (at) => at.postMsgpack("/add", add)],
        ["free, MessagePack", (at) => at.postMsgpack("/free", { ...scope, request_id: "r" })],
        ["batch", (at) => at.post("/batch", { ...scope, ops: [{ op: "free", request_id: "r" }] })],
        [
          "batch, MessagePack",
          (at) => at.postMsgpack("/batch", { ...scope, ops: [{ op: "free", request_id: "r" }] }),
        ],
        ["route", (at) => at.post("/route", { ...scope, request_id: "t", sequence_hashes: [1] })],
        ["unregister", (at) => at.post("/unregister", { ...scope, worker_id: 1 })],
        ["workers", (at) => at.get("/workers", { tenant_id: "a", routing_group: "b" })],
        ["loads", (at) => at.get("/loads", scope)],
        ["peers", (at) => at.get("/replica_sync/peers", scope)],
      ];
      for (const at of [v1, v2]) {
        for (const [label, call] of calls) {
          expect(await expectError(call(at), 400, both), label).toBe(both);
        }
      }
      expect([await stateOf(v1, model, "a"), await stateOf(v1, model, "b")]).toEqual(before);
    },
  );

  itBooking(
    "refuses a bad routing_group with 422 naming it, in bodies and queries, changing nothing",
    async () => {
      const model = uniqueModel("gen2");
      await expectOk(v1.post("/register", worker(model, "a", 1)), 201);
      await expectOk(
        v1.post("/add", {
          model_name: model,
          routing_group: "a",
          request_id: "r",
          worker_id: 1,
          dp_rank: 0,
          sequence_hashes: [1],
        }),
        201,
      );
      const before = [await stateOf(v1, model, "a"), await stateOf(v1, model, "default")];
      const expected = /^field `routing_group`: expected a string of 1\.\.256 UTF-8 bytes$/;
      for (const bad of ["", "x".repeat(257), 5, true, ["a"], { a: 1 }]) {
        const scope = { model_name: model, routing_group: bad };
        const bodies: [string, unknown][] = [
          ["/register", { ...worker(model, "a", 2), routing_group: bad }],
          ["/unregister", { ...scope, worker_id: 1 }],
          ["/add", { ...scope, request_id: "s", worker_id: 1, dp_rank: 0, sequence_hashes: [2] }],
          ["/prefill_complete", { ...scope, request_id: "r" }],
          ["/free", { ...scope, request_id: "r" }],
          ["/potential_loads", { ...scope, sequence_hashes: [1] }],
          ["/batch", { ...scope, ops: [{ op: "free", request_id: "r" }] }],
          ["/route", { ...scope, request_id: "t", sequence_hashes: [1] }],
        ];
        for (const [path, body] of bodies) {
          await expectError(v1.post(path, body), 422, expected);
          await expectError(v2.postMsgpack(path, body), 422, expected);
        }
      }
      for (const bad of ["", "x".repeat(257)]) {
        for (const path of ["/workers", "/loads", "/replica_sync/peers"]) {
          await expectError(v2.get(path, { model_name: model, routing_group: bad }), 422, expected);
        }
      }
      expect([await stateOf(v1, model, "a"), await stateOf(v1, model, "default")]).toEqual(before);
    },
  );

  itBooking(
    "may be sent by the typed client, which a second-generation frontend can use unchanged",
    async () => {
      const client = slotTrackerClient("http://tracker", {
        fetch: (input, init) => v2.fetch(new Request(input, init)),
      });
      const model = uniqueModel("gen2");
      const res = await client.register.$post({ json: worker(model, "typed", 3) });
      expect(res.status).toBe(201);
      const booked = await client.add.$post({
        json: {
          model_name: model,
          routing_group: "typed",
          request_id: "r",
          worker_id: 3,
          dp_rank: 0,
          sequence_hashes: [1],
        },
      });
      expect(booked.status).toBe(201);
      const rows = await (await client.loads.$get({ query: { routing_group: "typed" } })).json();
      expect(rows).toEqual([
        {
          model_name: model,
          routing_group: "typed",
          worker_id: 3,
          dp_rank: 0,
          active_prefill_tokens: 0,
          active_decode_blocks: 1,
        },
      ]);
      expect(
        (await client.free.$post({ json: { model_name: model, routing_group: "typed", request_id: "r" } }))
          .status,
      ).toBe(200);
    },
  );
});
