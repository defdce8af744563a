/**
 * Answers in the partition's two names (SPEC §3.1): `/workers` and `/loads` rows carry the key
 * `PARTITION_FIELD` names, in `tenant_id`'s place, never both; error texts that name the partition say
 * `tenant=` to a request that named it `tenant_id`, `routing_group=` to one that named it
 * `routing_group`, and follow `PARTITION_FIELD` for one that named neither (or both, agreeing).
 * The same Worker runs as deployed (`tenant_id`) and with `PARTITION_FIELD=routing_group`.
 */
import { decode } from "@msgpack/msgpack";
import { describe, expect } from "vitest";
import type { PartitionField } from "../../src/schema/partition";
import { expectError, expectOk, itBooking, okJson, uniqueModel } from "./api-http";
import { type Deployment, firstGeneration as v1, secondGeneration as v2 } from "./deployments";

/** How a request names its partition `g`: by one name, by neither (then `g` is "default"), or by both. */
type Naming = PartitionField | "neither" | "both";
const NAMINGS: readonly Naming[] = ["tenant_id", "routing_group", "neither", "both"];

function named(naming: Naming, g: string): Record<string, string> {
  if (naming === "neither") return {};
  if (naming === "both") return { tenant_id: g, routing_group: g };
  return { [naming]: g };
}

/** The word a text uses for the partition of a request named `naming`, at deployment `at`. */
function wordFor(naming: Naming, at: Deployment): string {
  if (naming === "tenant_id") return "tenant";
  if (naming === "routing_group") return "routing_group";
  return at === v2 ? "routing_group" : "tenant";
}

const DEPLOYMENTS: readonly [string, Deployment][] = [
  ["PARTITION_FIELD=tenant_id", v1],
  ["PARTITION_FIELD=routing_group", v2],
];

describe("listing rows", () => {
  itBooking(
    "carry the partition under PARTITION_FIELD's name, in tenant_id's place, whatever the query said",
    async () => {
      const model = uniqueModel("rows");
      await expectOk(
        v1.post("/register", {
          worker_id: 7,
          model_name: model,
          tenant_id: "g",
          block_size: 16,
          dp_start: 0,
          dp_size: 2,
        }),
        201,
      );
      await expectOk(
        v1.post("/add", {
          model_name: model,
          tenant_id: "g",
          request_id: "r",
          worker_id: 7,
          dp_rank: 1,
          sequence_hashes: [1, 2],
          new_isl_tokens: 3,
        }),
        201,
      );
      const workers = (key: string) =>
        `[{"worker_id":7,"model_name":"${model}",${key}:"g","block_size":16,"dp_start":0,"dp_size":2}]`;
      const loads = (key: string) =>
        `[{"model_name":"${model}",${key}:"g","worker_id":7,"dp_rank":0,"active_prefill_tokens":0,"active_decode_blocks":0},` +
        `{"model_name":"${model}",${key}:"g","worker_id":7,"dp_rank":1,"active_prefill_tokens":3,"active_decode_blocks":2}]`;
      const queries: Record<string, string>[] = [
        { model_name: model, tenant_id: "g" },
        { model_name: model, routing_group: "g" },
        { model_name: model },
      ];
      for (const query of queries) {
        for (const [at, key] of [
          [v1, '"tenant_id"'],
          [v2, '"routing_group"'],
        ] as const) {
          const w = await at.get("/workers", query);
          const l = await at.get("/loads", query);
          expect([w.status, await w.text()]).toEqual([200, workers(key)]);
          expect([l.status, await l.text()]).toEqual([200, loads(key)]);
        }
      }
      await expectOk(v1.post("/free", { model_name: model, tenant_id: "g", request_id: "r" }), 200);
    },
  );

  itBooking("never carry both keys, in JSON or MessagePack, sorted by tenant across trackers", async () => {
    const model = uniqueModel("rows");
    for (const tenant of ["b", "a", "c"]) {
      await expectOk(
        v1.post("/register", {
          worker_id: 2,
          model_name: model,
          routing_group: tenant,
          block_size: 16,
          dp_start: 0,
          dp_size: 1,
        }),
        201,
      );
    }
    for (const [, at] of DEPLOYMENTS) {
      const key = at === v2 ? "routing_group" : "tenant_id";
      for (const path of ["/workers", "/loads"]) {
        const json = (await okJson(at.get(path, { model_name: model }))) as Record<string, unknown>[];
        const res = await at.get(path, { model_name: model }, { accept: "application/msgpack" });
        expect(res.headers.get("content-type")).toBe("application/msgpack");
        const packed = decode(new Uint8Array(await res.arrayBuffer())) as Record<string, unknown>[];
        for (const rows of [json, packed]) {
          expect(rows.map((row) => row[key])).toEqual(["a", "b", "c"]);
          for (const row of rows) {
            expect(Object.keys(row).filter((k) => k === "tenant_id" || k === "routing_group")).toEqual([key]);
            expect(Object.keys(row).indexOf(key)).toBe(path === "/workers" ? 2 : 1);
          }
        }
      }
    }
  });
});

describe("error texts naming the partition", () => {
  itBooking(
    "say tenant= or routing_group= as the request named it, else as PARTITION_FIELD says",
    async () => {
      for (const naming of NAMINGS) {
        for (const [label, at] of DEPLOYMENTS) {
          const model = uniqueModel("texts");
          const g = naming === "neither" ? "default" : "g";
          const scope = { model_name: model, ...named(naming, g) };
          const tracker = `model=${model} ${wordFor(naming, at)}=${g}`;
          const why = `${naming} at ${label}`;
          const expectText = async (res: Promise<Response>, status: number, text: string) =>
            expect(await expectError(res, status, text), why).toBe(text);

          // No tracker yet: every route about one says so.
          const missing = `no slot tracker for ${tracker}`;
          const add = { request_id: "r", worker_id: 1, dp_rank: 0, sequence_hashes: [1] };
          await expectText(at.post("/add", { ...scope, ...add }), 404, missing);
          await expectText(at.postMsgpack("/add", { ...scope, ...add }), 404, missing);
          await expectText(at.post("/prefill_complete", { ...scope, request_id: "r" }), 404, missing);
          await expectText(at.postMsgpack("/free", { ...scope, request_id: "r" }), 404, missing);
          await expectText(at.post("/potential_loads", { ...scope, sequence_hashes: [] }), 404, missing);
          await expectText(
            at.post("/route", { ...scope, request_id: "r", sequence_hashes: [1] }),
            404,
            missing,
          );
          await expectText(
            at.post("/unregister", { ...scope, worker_id: 1 }),
            404,
            `worker 1 not found for ${tracker}`,
          );
          const ops = [
            { op: "free", request_id: "r" },
            { op: "add", ...add },
          ];
          for (const batch of [
            at.post("/batch", { ...scope, ops }),
            at.postMsgpack("/batch", { ...scope, ops }),
          ]) {
            expect(await okJson(batch), why).toEqual({
              results: [
                { status: 404, error: missing },
                { status: 404, error: missing },
              ],
            });
          }

          // A prefill worker only: registering again, or routing, names the tracker.
          const registration = { ...scope, worker_id: 1, block_size: 16, dp_start: 0, dp_size: 1 };
          await expectOk(at.post("/register", { ...registration, worker_type: "prefill" }), 201);
          await expectText(
            at.post("/register", { ...registration, worker_id: 2, block_size: 32 }),
            409,
            `block_size mismatch for ${tracker}: existing=16, requested=32`,
          );
          await expectText(
            at.postMsgpack("/register", registration),
            409,
            `worker 1 already registered for ${tracker}`,
          );
          await expectText(
            at.post("/unregister", { ...scope, worker_id: 9 }),
            404,
            `worker 9 not found for ${tracker}`,
          );
          await expectText(
            at.post("/route", { ...scope, request_id: "r", sequence_hashes: [1] }),
            503,
            `no decode worker registered for ${tracker}: every registered worker is a prefill worker`,
          );
          await expectOk(at.post("/unregister", { ...scope, worker_id: 1 }), 200);
        }
      }
    },
  );

  itBooking("leave every other text as it is, even one whose request id reads like a tracker", async () => {
    const model = uniqueModel("texts");
    const scope = { model_name: model, routing_group: "g" };
    await expectOk(
      v2.post("/register", { ...scope, worker_id: 1, block_size: 16, dp_start: 0, dp_size: 1 }),
      201,
    );
    const sneaky = `model=${model} tenant=g`;
    for (const at of [v1, v2]) {
      await expectError(
        at.post("/prefill_complete", { ...scope, request_id: sneaky }),
        404,
        `Request ${sneaky} not found`,
      );
      await expectError(
        at.post("/add", { ...scope, request_id: "r", worker_id: 1, dp_rank: 3, sequence_hashes: [] }),
        404,
        "Worker WorkerWithDpRank { worker_id: 1, dp_rank: 3 } not found",
      );
      expect(
        await okJson(at.post("/batch", { ...scope, ops: [{ op: "prefill_complete", request_id: sneaky }] })),
      ).toEqual({
        results: [{ status: 404, error: `Request ${sneaky} not found` }],
      });
    }
    await expectOk(
      v2.post("/add", { ...scope, request_id: sneaky, worker_id: 1, dp_rank: 0, sequence_hashes: [1] }),
      201,
    );
    await expectError(
      v2.post("/add", { ...scope, request_id: sneaky, worker_id: 1, dp_rank: 0, sequence_hashes: [1] }),
      409,
      `Request ${sneaky} already exists (assigned to worker WorkerWithDpRank { worker_id: 1, dp_rank: 0 })`,
    );
    await expectOk(v2.post("/free", { ...scope, request_id: sneaky }), 200);
  });
});
