/**
 * The Worker's write routes against fake objects: each answers Dynamo's status and body, calls the
 * (replica, model, tenant) tracker with exact 64-bit ids, and passes a tracker's failure through.
 */
import { describe, expect, it } from "vitest";
import { trackerName } from "../../durable-objects/naming";
import type { AddInput, RegisterInput } from "../../durable-objects/types";
import app from "../../src/app";
import { fakeEnv, json, OK } from "./route-fake-env";

describe("writes", () => {
  it("POST /register answers 201 ok and calls the (replica, model, tenant) tracker with exact ids", async () => {
    const { env, calls } = fakeEnv({ register: async () => OK });
    const res = await app.request(
      "/register",
      json('{"worker_id":18446744073709551615,"model_name":"m","block_size":16,"dp_start":0,"dp_size":2}'),
      env,
    );
    expect(res.status).toBe(201);
    expect(await res.text()).toBe('{"status":"ok"}');
    const input: RegisterInput = { workerId: 18446744073709551615n, blockSize: 16, dpStart: 0, dpSize: 2 };
    expect(calls).toEqual([
      {
        object: trackerName({ replica: "primary", model: "m", tenant: "default" }),
        hint: undefined,
        method: "register",
        args: [input],
      },
    ]);
  });

  it("passes the tracker's failure message through with its mapped status", async () => {
    const message = "worker 1 already registered for model=m tenant=default";
    const { env } = fakeEnv({ register: async () => ({ ok: false, code: "duplicate_worker", message }) });
    const res = await app.request(
      "/register",
      json({ worker_id: 1, model_name: "m", block_size: 1, dp_start: 0, dp_size: 1 }),
      env,
    );
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ error: message });
  });

  it("POST /add passes hashes as one BigUint64Array and answers 201", async () => {
    const { env, calls } = fakeEnv({ add: async () => OK });
    const res = await app.request(
      "/add",
      json(
        '{"model_name":"m","routing_group":"g","request_id":"r","worker_id":7,"dp_rank":1,"sequence_hashes":[-1,2],"new_isl_tokens":8,"expected_output_tokens":5}',
      ),
      env,
    );
    expect(res.status).toBe(201);
    expect(calls[0]?.object).toBe(trackerName({ replica: "primary", model: "m", tenant: "g" }));
    const input = calls[0]?.args[0] as AddInput;
    expect(input.hashes).toEqual(BigUint64Array.of(18446744073709551615n, 2n));
    expect(input).toMatchObject({
      requestId: "r",
      workerId: 7n,
      dpRank: 1,
      newIslTokens: 8,
      expectedOutputTokens: 5,
    });
  });

  it("POST /prefill_complete and /free answer 200 ok, and 404 with the tracker's text", async () => {
    const missing = "no slot tracker for model=m tenant=default";
    const { env } = fakeEnv({
      prefillComplete: async () => OK,
      free: async () => ({ ok: false, code: "tracker_not_found", message: missing }),
    });
    const body = { model_name: "m", request_id: "r" };
    const done = await app.request("/prefill_complete", json(body), env);
    expect([done.status, await done.text()]).toEqual([200, '{"status":"ok"}']);
    const freed = await app.request("/free", json(body), env);
    expect([freed.status, await freed.json()]).toEqual([404, { error: missing }]);
  });

  it("routes to the replica named in the header and passes its location hint", async () => {
    const { env, calls } = fakeEnv({ unregister: async () => OK }, {}, "primary,weur");
    const init = json({ worker_id: 3, model_name: "m" });
    const res = await app.request(
      "/unregister",
      { ...init, headers: { ...init.headers, "x-slot-tracker-replica": "weur" } },
      env,
    );
    expect(res.status).toBe(200);
    expect(calls[0]).toMatchObject({
      object: trackerName({ replica: "weur", model: "m", tenant: "default" }),
      hint: "weur",
    });
  });
});
