/**
 * The lease routes of both APIs and the `owner` field of the booking routes, against recording fake
 * objects: which tracker each call reaches and with what, the answers' shapes, the partition named
 * in "no live lease" as the request named it, and every bad lease field refused naming it.
 */
import { encode } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";
import type { LeaseInfo } from "../../durable-objects/core/lease/lease-book";
import { text } from "../../durable-objects/core/messages";
import { trackerName } from "../../durable-objects/naming";
import type { ReservationInput, SelectInput } from "../../durable-objects/selection-types";
import type { AddInput, BatchOp, Failure, RouteInput } from "../../durable-objects/types";
import app from "../../src/app";
import { fakeEnv, json, OK } from "./route-fake-env";

const tracker = (tenant: string) => trackerName({ replica: "primary", model: "m", tenant });
const renewed = async (owner: string, ttlMs: number) => ({
  ok: true as const,
  owner,
  expiresAtMs: 1_000 + ttlMs,
});
const noLease = (tenant: string, owner: string): Failure => ({
  ok: false,
  code: "lease_not_found",
  message: text.leaseNotFound("m", tenant, owner),
});
const del = (path: string) => app.request(path, { method: "DELETE" }, fakeEnv({}).env);

describe("POST /leases", () => {
  it("renews the owner's lease on the tracker the body names and answers its deadline", async () => {
    const { env, calls } = fakeEnv({ renewLease: renewed });
    const res = await app.request(
      "/leases",
      json({ model_name: "m", routing_group: "g", owner: "fe-1", ttl_ms: 3000 }),
      env,
    );
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('{"owner":"fe-1","expires_at_ms":4000}');
    expect(calls).toMatchObject([{ object: tracker("g"), method: "renewLease", args: ["fe-1", 3000] }]);
  });

  it("takes a MessagePack body and answers in MessagePack when asked", async () => {
    const { env, calls } = fakeEnv({ renewLease: renewed });
    const res = await app.request(
      "/leases",
      {
        method: "POST",
        body: encode({ model_name: "m", owner: "fe", ttl_ms: 1000 }),
        headers: { "content-type": "application/msgpack" },
      },
      env,
    );
    expect(res.status).toBe(200);
    expect(calls[0]?.args).toEqual(["fe", 1000]);
  });

  it.each([
    [{ model_name: "m", ttl_ms: 1000 }, "missing field `owner`"],
    [{ model_name: "m", owner: "", ttl_ms: 1000 }, "field `owner`: expected a string of 1..256 UTF-8 bytes"],
    [
      { model_name: "m", owner: "é".repeat(129), ttl_ms: 1000 },
      "field `owner`: expected a string of 1..256 UTF-8 bytes",
    ],
    [{ model_name: "m", owner: 5, ttl_ms: 1000 }, "field `owner`: expected a string of 1..256 UTF-8 bytes"],
    [{ model_name: "m", owner: "o" }, "missing field `ttl_ms`"],
    [{ model_name: "m", owner: "o", ttl_ms: 999 }, "field `ttl_ms`: expected an integer from 1000 to 600000"],
    [
      { model_name: "m", owner: "o", ttl_ms: 600_001 },
      "field `ttl_ms`: expected an integer from 1000 to 600000",
    ],
    [
      { model_name: "m", owner: "o", ttl_ms: 1500.5 },
      "field `ttl_ms`: expected an integer from 1000 to 600000",
    ],
    [
      { model_name: "m", owner: "o", ttl_ms: "2000" },
      "field `ttl_ms`: expected an integer from 1000 to 600000",
    ],
  ])("refuses %j with 422 naming the field", async (body, error) => {
    const { env, calls } = fakeEnv({ renewLease: renewed });
    const res = await app.request("/leases", json(body), env);
    expect([res.status, await res.json()]).toEqual([422, { error }]);
    expect(calls).toEqual([]);
  });

  it("accepts an owner of exactly 256 UTF-8 bytes and both ends of the ttl range", async () => {
    const { env, calls } = fakeEnv({ renewLease: renewed });
    for (const [owner, ttl] of [
      ["é".repeat(128), 1000],
      ["o", 600_000],
    ] as const) {
      const res = await app.request("/leases", json({ model_name: "m", owner, ttl_ms: ttl }), env);
      expect(res.status).toBe(200);
    }
    expect(calls.length).toBe(2);
  });

  it("answers 429 with the tracker's text at the lease cap", async () => {
    const message = "lease limit reached: at most 2 live leases per tracker";
    const { env } = fakeEnv({ renewLease: async () => ({ ok: false, code: "limit_exceeded", message }) });
    const res = await app.request("/leases", json({ model_name: "m", owner: "o", ttl_ms: 1000 }), env);
    expect([res.status, await res.json()]).toEqual([429, { error: message }]);
  });
});

describe("DELETE /leases/{owner}", () => {
  it("ends the percent-decoded owner's lease and answers how many bookings it freed", async () => {
    const { env, calls } = fakeEnv({ endLease: async () => ({ ok: true, freed: 3 }) });
    const res = await app.request(
      "/leases/fe%2F1%20%C3%A9?model_name=m&tenant_id=t",
      { method: "DELETE" },
      env,
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ owner: "fe/1 é", freed: 3 });
    expect(calls).toMatchObject([{ object: tracker("t"), method: "endLease", args: ["fe/1 é"] }]);
  });

  it("answers 404 naming the tracker as the query named it", async () => {
    for (const [query, phrase] of [
      ["tenant_id=t", "model=m tenant=t"],
      ["routing_group=t", "model=m routing_group=t"],
    ] as const) {
      const { env } = fakeEnv({ endLease: async () => noLease("t", "fe") });
      const res = await app.request(`/leases/fe?model_name=m&${query}`, { method: "DELETE" }, env);
      expect([res.status, await res.json()]).toEqual([
        404,
        { error: `no live lease for ${phrase} owner "fe"` },
      ]);
    }
  });

  it("refuses an owner over 256 bytes (422) and a missing model (422), naming the field", async () => {
    const long = await del(`/leases/${"o".repeat(257)}?model_name=m`);
    expect([long.status, await long.json()]).toEqual([
      422,
      { error: "field `owner`: expected a string of 1..256 UTF-8 bytes" },
    ]);
    const noModel = await del("/leases/o");
    expect(noModel.status).toBe(422);
    expect(((await noModel.json()) as { error: string }).error).toContain("model_name");
  });
});

describe("GET /leases", () => {
  it("lists the tracker's live leases sorted by owner's UTF-8 bytes", async () => {
    const rows: LeaseInfo[] = [
      { owner: "\u{1F600}", expiresAtMs: 9, bookings: 0 },
      { owner: "\uFFFD", expiresAtMs: 8, bookings: 1 },
      { owner: "a", expiresAtMs: 7, bookings: 2 },
    ];
    const { env, calls } = fakeEnv({ listLeases: async () => rows });
    const res = await app.request("/leases?model_name=m&routing_group=g", {}, env);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([
      { owner: "a", expires_at_ms: 7, bookings: 2 },
      { owner: "\uFFFD", expires_at_ms: 8, bookings: 1 },
      { owner: "\u{1F600}", expires_at_ms: 9, bookings: 0 },
    ]);
    expect(calls).toMatchObject([{ object: tracker("g"), method: "listLeases" }]);
  });
});

describe("the selection API's lease routes", () => {
  it("renew, end and list on the routing group's tracker, defaulting both names", async () => {
    const { env, calls } = fakeEnv({
      renewLease: renewed,
      endLease: async () => ({ ok: true, freed: 0 }),
      listLeases: async () => [{ owner: "fe", expiresAtMs: 2, bookings: 1 }],
    });
    const post = await app.request(
      "/selection/leases",
      json({ routing_group: "g", owner: "fe", ttl_ms: 1000 }),
      env,
    );
    expect([post.status, await post.json()]).toEqual([200, { owner: "fe", expires_at_ms: 2000 }]);
    const end = await app.request("/selection/leases/fe?routing_group=g", { method: "DELETE" }, env);
    expect([end.status, await end.json()]).toEqual([200, { owner: "fe", freed: 0 }]);
    const list = await app.request("/selection/leases", {}, env);
    expect([list.status, await list.json()]).toEqual([200, [{ owner: "fe", expires_at_ms: 2, bookings: 1 }]]);
    const defaults = trackerName({ replica: "primary", model: "default", tenant: "default" });
    expect(calls.map((c) => [c.object, c.method])).toEqual([
      [trackerName({ replica: "primary", model: "default", tenant: "g" }), "renewLease"],
      [trackerName({ replica: "primary", model: "default", tenant: "g" }), "endLease"],
      [defaults, "listLeases"],
    ]);
  });

  it("names the tracker `routing_group=` in its 404", async () => {
    const { env } = fakeEnv({ endLease: async () => noLease("g", "fe") });
    const res = await app.request(
      "/selection/leases/fe?model_name=m&routing_group=g",
      { method: "DELETE" },
      env,
    );
    expect([res.status, await res.json()]).toEqual([
      404,
      { error: 'no live lease for model=m routing_group=g owner "fe"' },
    ]);
  });

  it.each([
    [{ ttl_ms: 1000 }, "missing field `owner`"],
    [{ owner: "", ttl_ms: 1000 }, "owner: invalid length 0, expected a string of 1..256 UTF-8 bytes"],
    [{ owner: "o" }, "missing field `ttl_ms`"],
    [
      { owner: "o", ttl_ms: 999 },
      "ttl_ms: invalid value: integer `999`, expected an integer from 1000 to 600000",
    ],
    [{ owner: "o", ttl_ms: "1000" }, 'ttl_ms: invalid type: string "1000", expected u64'],
  ])("refuses %j in serde's words behind axum's sentence (422)", async (body, error) => {
    const res = await app.request("/selection/leases", json(body), fakeEnv({}).env);
    expect([res.status, await res.json()]).toEqual([
      422,
      { error: `Failed to deserialize the JSON body into the target type: ${error}` },
    ]);
  });

  it("refuses an owner path segment over 256 bytes with 400, axum's Path prefix", async () => {
    const res = await del(`/selection/leases/${"o".repeat(257)}`);
    expect([res.status, await res.json()]).toEqual([
      400,
      { error: "Invalid URL: owner: invalid length 257, expected a string of 1..256 UTF-8 bytes" },
    ]);
  });
});

describe("owner on the booking routes", () => {
  const add = { model_name: "m", request_id: "r", worker_id: 1, dp_rank: 0, sequence_hashes: [1] };

  it("passes /add's owner to the tracker, and none when absent", async () => {
    const { env, calls } = fakeEnv({ add: async () => OK });
    await app.request("/add", json({ ...add, owner: "fe" }), env);
    await app.request("/add", json(add), env);
    expect((calls[0]!.args[0] as AddInput).owner).toBe("fe");
    expect(calls[1]?.args[0]).not.toHaveProperty("owner");
  });

  it("takes /add's owner from a MessagePack body", async () => {
    const { env, calls } = fakeEnv({ add: async () => OK });
    const res = await app.request(
      "/add",
      {
        method: "POST",
        body: encode({ ...add, owner: "fe" }),
        headers: { "content-type": "application/msgpack" },
      },
      env,
    );
    expect(res.status).toBe(201);
    expect((calls[0]!.args[0] as AddInput).owner).toBe("fe");
  });

  it("passes /route's and each /batch add op's owner", async () => {
    const { env, calls } = fakeEnv({
      route: async () => ({ ok: false, code: "no_worker", message: "none" }),
      batch: async () => ({ ok: true, results: [] }),
    });
    await app.request(
      "/route",
      json({ model_name: "m", request_id: "r", sequence_hashes: [1], owner: "fe" }),
      env,
    );
    const { model_name: _m, ...op } = add;
    await app.request(
      "/batch",
      json({
        model_name: "m",
        ops: [
          { op: "add", ...op, owner: "fe" },
          { op: "add", ...op },
        ],
      }),
      env,
    );
    expect((calls[0]!.args[0] as RouteInput).owner).toBe("fe");
    const ops = calls[1]?.args[0] as BatchOp[];
    expect(ops.map((o) => ("owner" in o ? o.owner : undefined))).toEqual(["fe", undefined]);
  });

  it("names the tracker `routing_group=` in a /batch op's no-live-lease text when the body did", async () => {
    const message = text.leaseNotFound("m", "g", 'tenant=x"');
    const { env } = fakeEnv({
      batch: async () => ({ ok: true, results: [{ status: 404, error: message }] }),
    });
    const { model_name: _m, ...op } = add;
    const res = await app.request(
      "/batch",
      json({ model_name: "m", routing_group: "g", ops: [{ op: "add", ...op, owner: 'tenant=x"' }] }),
      env,
    );
    expect(await res.json()).toEqual({
      results: [{ status: 404, error: 'no live lease for model=m routing_group=g owner "tenant=x\\""' }],
    });
  });

  it.each([
    ["/add", { ...add, owner: "" }, "field `owner`"],
    ["/route", { model_name: "m", request_id: "r", sequence_hashes: [1], owner: 7 }, "field `owner`"],
    [
      "/batch",
      { model_name: "m", ops: [{ op: "add", ...add, owner: "o".repeat(257) }] },
      "field `ops[0].owner`",
    ],
  ])("%s refuses a bad owner with 422 naming the field", async (path, body, field) => {
    const res = await app.request(path, json(body), fakeEnv({}).env);
    expect([res.status, await res.json()]).toEqual([
      422,
      { error: `${field}: expected a string of 1..256 UTF-8 bytes` },
    ]);
  });

  it("passes the selection bookings' owner, and refuses a bad one in serde's words", async () => {
    const { env, calls } = fakeEnv({
      select: async () => noLease("g", "fe"),
      reserve: async () => noLease("g", "fe"),
    });
    const prompt = {
      model_name: "m",
      routing_group: "g",
      sequence_hashes: [1],
      block_hashes: [1],
      isl_tokens: 16,
    };
    const chosen = await app.request("/selection/select_and_reserve", json({ ...prompt, owner: "fe" }), env);
    const reserved = await app.request(
      "/selection/reservations",
      json({ ...prompt, selection_id: "s", worker_id: 1, owner: "fe" }),
      env,
    );
    for (const res of [chosen, reserved]) {
      expect([res.status, await res.json()]).toEqual([
        404,
        { error: 'no live lease for model=m routing_group=g owner "fe"' },
      ]);
    }
    expect((calls[0]!.args[0] as SelectInput).owner).toBe("fe");
    expect((calls[1]!.args[0] as ReservationInput).owner).toBe("fe");
    const bad = await app.request("/selection/select_and_reserve", json({ ...prompt, owner: "" }), env);
    expect([bad.status, await bad.json()]).toEqual([
      422,
      {
        error:
          "Failed to deserialize the JSON body into the target type: owner: invalid length 0, expected a string of 1..256 UTF-8 bytes",
      },
    ]);
  });
});
