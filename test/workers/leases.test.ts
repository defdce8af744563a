/**
 * Frontend leases over HTTP on real objects (SPEC §8): create, renew, list and delete; a booking
 * naming an owner without a live lease is refused on /add, /route and /batch and changes nothing;
 * with one it is booked and counted, and deleting the lease frees it at once. Leases here live for
 * the longest ttl (600 s), so none lapses however slow the machine; lapses are the core's tests.
 */
import { encode } from "@msgpack/msgpack";
import { describe, expect } from "vitest";
import {
  add,
  call,
  expectError,
  get,
  itBooking,
  okJson,
  post,
  register,
  type Scope,
  stateText,
  uniqueModel,
} from "./api-http";

const TTL = 600_000;
const loads = (scope: Scope) =>
  get("/loads", { model_name: scope.model, tenant_id: "default" }).then((r) => r.text());
const lease = (scope: Scope, owner: string, ttl = TTL) =>
  post("/leases", { model_name: scope.model, owner, ttl_ms: ttl });
const leasesOf = (scope: Scope) => okJson(get("/leases", { model_name: scope.model }));
const endLease = (scope: Scope, owner: string, tenant = "tenant_id=default") =>
  call("DELETE", `/leases/${encodeURIComponent(owner)}?model_name=${scope.model}&${tenant}`);
const noLease = (scope: Scope, owner: string, phrase = "tenant=default") =>
  `no live lease for model=${scope.model} ${phrase} owner ${JSON.stringify(owner)}`;

describe("leases", () => {
  itBooking("are created, renewed, listed and deleted, on a tracker with no worker too", async () => {
    const scope = { model: uniqueModel("lease") };
    const before = Date.now();
    const first = (await okJson(lease(scope, "fe/1 é", 60_000))) as { owner: string; expires_at_ms: number };
    expect(first.owner).toBe("fe/1 é");
    expect(first.expires_at_ms).toBeGreaterThanOrEqual(before + 60_000);
    const renewed = (await okJson(lease(scope, "fe/1 é"))) as { expires_at_ms: number };
    expect(renewed.expires_at_ms).toBeGreaterThanOrEqual(first.expires_at_ms + TTL - 60_000);
    await okJson(lease(scope, "a"));
    expect(await leasesOf(scope)).toEqual([
      { owner: "a", expires_at_ms: expect.any(Number), bookings: 0 },
      { owner: "fe/1 é", expires_at_ms: renewed.expires_at_ms, bookings: 0 },
    ]);
    expect(await okJson(endLease(scope, "fe/1 é"))).toEqual({ owner: "fe/1 é", freed: 0 });
    expect(await leasesOf(scope)).toEqual([{ owner: "a", expires_at_ms: expect.any(Number), bookings: 0 }]);
    await expectError(endLease(scope, "fe/1 é"), 404, noLease(scope, "fe/1 é"));
    await expectError(
      endLease(scope, "x", "routing_group=default"),
      404,
      noLease(scope, "x", "routing_group=default"),
    );
  });

  itBooking("take MessagePack bodies and answer in MessagePack when asked", async () => {
    const scope = { model: uniqueModel("lease-mp") };
    const res = await call("POST", "/leases", {
      body: encode({ model_name: scope.model, owner: "fe", ttl_ms: TTL }),
      headers: { "content-type": "application/msgpack", accept: "application/msgpack" },
    });
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "application/msgpack"]);
    expect(await leasesOf(scope)).toMatchObject([{ owner: "fe", bookings: 0 }]);
  });

  itBooking("refuse each bad lease field with 4xx naming it, and an unknown replica with 400", async () => {
    const scope = { model: uniqueModel("lease-bad") };
    const m = scope.model;
    for (const [body, field] of [
      [{ model_name: m, owner: "", ttl_ms: TTL }, "owner"],
      [{ model_name: m, owner: "o".repeat(257), ttl_ms: TTL }, "owner"],
      [{ model_name: m, owner: "o", ttl_ms: 999 }, "ttl_ms"],
      [{ model_name: m, owner: "o", ttl_ms: 600_001 }, "ttl_ms"],
      [{ model_name: m, owner: "o", ttl_ms: 1000.5 }, "ttl_ms"],
    ] as const) {
      await expectError(post("/leases", body), 422, new RegExp(`\`${field}\``));
    }
    await expectError(endLease(scope, "o".repeat(257)), 422, /`owner`/);
    await expectError(
      post("/leases", { model_name: m, owner: "o", ttl_ms: TTL }, { "x-slot-tracker-replica": "nowhere" }),
      400,
      /unknown replica "nowhere"/,
    );
    expect(await leasesOf(scope)).toEqual([]);
  });
});

describe("owned bookings", () => {
  const prompt = (id: string, rank = 0) => ({
    request_id: id,
    worker_id: 1,
    dp_rank: rank,
    sequence_hashes: [1, 2],
  });

  itBooking(
    "without a live lease are refused 404 on /add, /route and /batch, and change nothing",
    async () => {
      const scope = { model: uniqueModel("owned-none") };
      expect((await register(scope, 1, { dpSize: 2 })).status).toBe(201);
      const before = await stateText(scope);
      await expectError(
        post("/add", { model_name: scope.model, ...prompt("a"), owner: "fe" }),
        404,
        noLease(scope, "fe"),
      );
      await expectError(
        post("/add", { model_name: scope.model, routing_group: "default", ...prompt("a"), owner: "fe" }),
        404,
        noLease(scope, "fe", "routing_group=default"),
      );
      await expectError(
        post("/route", { model_name: scope.model, request_id: "r", sequence_hashes: [1], owner: "fe" }),
        404,
        noLease(scope, "fe"),
      );
      const batch = await okJson(
        post("/batch", { model_name: scope.model, ops: [{ op: "add", ...prompt("b"), owner: "fe" }] }),
      );
      expect(batch).toEqual({ results: [{ status: 404, error: noLease(scope, "fe") }] });
      // An ended lease is no lease either.
      await okJson(lease(scope, "gone"));
      await okJson(endLease(scope, "gone"));
      await expectError(
        post("/add", { model_name: scope.model, ...prompt("c"), owner: "gone" }),
        404,
        noLease(scope, "gone"),
      );
      expect(await stateText(scope)).toBe(before);
    },
  );

  itBooking("with a lease are booked and counted, and deleting it frees them at once", async () => {
    const scope = { model: uniqueModel("owned") };
    expect((await register(scope, 1, { dpSize: 2 })).status).toBe(201);
    const idle = await loads(scope);
    await okJson(lease(scope, "fe"));
    expect((await post("/add", { model_name: scope.model, ...prompt("a"), owner: "fe" })).status).toBe(201);
    const routed = await post("/route", {
      model_name: scope.model,
      request_id: "r",
      sequence_hashes: [5],
      owner: "fe",
    });
    expect(routed.status).toBe(201);
    const batch = await okJson(
      post("/batch", {
        model_name: scope.model,
        ops: [
          { op: "add", ...prompt("b", 1), owner: "fe" },
          { op: "add", ...prompt("unowned", 1) },
        ],
      }),
    );
    expect(batch).toEqual({ results: [{ status: 201 }, { status: 201 }] });
    expect(await leasesOf(scope)).toMatchObject([{ owner: "fe", bookings: 3 }]);
    expect(await okJson(endLease(scope, "fe"))).toEqual({ owner: "fe", freed: 3 });
    // Only the unowned booking is left: the owned ones are gone with no wait.
    const left = (await okJson(get("/loads", { model_name: scope.model }))) as {
      active_decode_blocks: number;
    }[];
    expect(left.map((row) => row.active_decode_blocks)).toEqual([0, 2]);
    expect((await post("/free", { model_name: scope.model, request_id: "unowned" })).status).toBe(200);
    expect(await loads(scope)).toBe(idle);
    expect(await leasesOf(scope)).toEqual([]);
  });

  itBooking("take the owner from a MessagePack /add body", async () => {
    const scope = { model: uniqueModel("owned-mp") };
    expect((await register(scope, 1)).status).toBe(201);
    await okJson(lease(scope, "fe"));
    const res = await call("POST", "/add", {
      body: encode({ model_name: scope.model, ...prompt("a"), owner: "fe" }),
      headers: { "content-type": "application/msgpack" },
    });
    expect(res.status).toBe(201);
    expect(await leasesOf(scope)).toMatchObject([{ owner: "fe", bookings: 1 }]);
  });

  itBooking("refuse a bad owner with 422 naming the field, changing nothing", async () => {
    const scope = { model: uniqueModel("owned-bad") };
    expect((await register(scope, 1)).status).toBe(201);
    const before = await stateText(scope);
    const m = scope.model;
    await expectError(post("/add", { model_name: m, ...prompt("a"), owner: "" }), 422, /^field `owner`/);
    await expectError(
      post("/route", { model_name: m, request_id: "r", sequence_hashes: [1], owner: 1 }),
      422,
      /^field `owner`/,
    );
    await expectError(
      post("/batch", { model_name: m, ops: [{ op: "add", ...prompt("b"), owner: "o".repeat(257) }] }),
      422,
      /^field `ops\[0\]\.owner`/,
    );
    expect(await stateText(scope)).toBe(before);
    expect(await add(scope, "a", 1, 0, [1])).toHaveProperty("status", 201);
  });
});
