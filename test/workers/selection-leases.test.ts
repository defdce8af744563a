/**
 * The selection API's leases over HTTP on real objects (SPEC §8): `/selection/leases` routes, and
 * `owner` on `/selection/select_and_reserve` and `/selection/reservations` (both forms): refused
 * 404 without a live lease, naming the tracker `routing_group=`, with nothing changed (not even a
 * pending selection); booked with one; freed at once when it is deleted. One lease book serves both
 * APIs. Leases live 600 s, longer than any test.
 */
import { describe, expect, it } from "vitest";
import { parseExact } from "./api-http";
import {
  body,
  jsonOf,
  type Partition,
  range,
  schedule,
  selectionCall,
  selectionPost,
  uniquePartition,
} from "./booking-http";
import { postJson, send } from "./reliability-http";

const TTL = 600_000;
const slotLoads = async (p: Partition) => (await send("GET", `/loads?model_name=${p.model}`)).text;
const leasesOf = async (p: Partition) =>
  jsonOf(await selectionCall("GET", `/leases?model_name=${p.model}`), 200) as unknown as Record<
    string,
    unknown
  >[];
const noLease = (p: Partition, owner: string) => ({
  error: `no live lease for model=${p.model} routing_group=${p.group} owner ${JSON.stringify(owner)}`,
});

describe("selection leases", () => {
  it("are created, listed and deleted, with the slot-tracker API's answers", async () => {
    const p = uniquePartition("sel-lease");
    const made = jsonOf(await selectionPost("/leases", body(p, { owner: "fe", ttl_ms: TTL })), 200);
    expect(made).toEqual({ owner: "fe", expires_at_ms: expect.any(Number) });
    expect(await leasesOf(p)).toEqual([{ owner: "fe", expires_at_ms: made.expires_at_ms, bookings: 0 }]);
    const slot = await send("GET", `/leases?model_name=${p.model}`);
    expect(parseExact(slot.text)).toEqual(await leasesOf(p));
    expect(jsonOf(await selectionCall("DELETE", `/leases/fe?model_name=${p.model}`), 200)).toEqual({
      owner: "fe",
      freed: 0,
    });
    expect(jsonOf(await selectionCall("DELETE", `/leases/fe?model_name=${p.model}`), 404)).toEqual(
      noLease(p, "fe"),
    );
  });

  it("refuse bad fields in serde's words (422) and a bad owner segment with 400", async () => {
    const p = uniquePartition("sel-lease-bad");
    const refused = jsonOf(await selectionPost("/leases", body(p, { owner: "fe", ttl_ms: 100 })), 422);
    expect(refused.error).toMatch(/^Failed to deserialize the JSON body into the target type: ttl_ms: /);
    const noOwner = jsonOf(await selectionPost("/leases", body(p, { ttl_ms: TTL })), 422);
    expect(noOwner.error).toMatch(/missing field `owner`$/);
    const long = jsonOf(
      await selectionCall("DELETE", `/leases/${"o".repeat(300)}?model_name=${p.model}`),
      400,
    );
    expect(long.error).toMatch(/^Invalid URL: owner: invalid length 300/);
    expect(await leasesOf(p)).toEqual([]);
  });
});

describe("owned selection bookings", () => {
  it("without a live lease are refused 404 naming routing_group, changing nothing", async () => {
    const p = uniquePartition("sel-owned-none");
    await schedule(p, [{ workerId: 9n }]);
    const before = await slotLoads(p);
    const reserve = await selectionPost(
      "/select_and_reserve",
      body(p, { token_ids: range(1, 8), owner: "fe" }),
    );
    expect(jsonOf(reserve, 404)).toEqual(noLease(p, "fe"));
    const explicit = await selectionPost(
      "/reservations",
      body(p, { selection_id: "x", worker_id: 9, token_ids: range(1, 8), owner: "fe" }),
    );
    expect(jsonOf(explicit, 404)).toEqual(noLease(p, "fe"));
    // A pending selection refused for its owner is kept: the replay without an owner still books it.
    expect(
      (await selectionPost("/select", body(p, { selection_id: "pend", token_ids: range(1, 4) }))).status,
    ).toBe(200);
    const replay = await selectionPost("/reservations", body(p, { selection_id: "pend", owner: "fe" }));
    expect(jsonOf(replay, 404)).toEqual(noLease(p, "fe"));
    expect(await slotLoads(p)).toBe(before);
    expect((await selectionPost("/reservations", body(p, { selection_id: "pend" }))).status).toBe(201);
  });

  it("with a lease are booked, counted across both APIs, and freed at once when it is deleted", async () => {
    const p = uniquePartition("sel-owned");
    await schedule(p, [{ workerId: 9n }]);
    const idle = await slotLoads(p);
    // Made through the slot-tracker API: one lease book for both.
    expect((await postJson("/leases", { model_name: p.model, owner: "fe", ttl_ms: TTL })).status).toBe(200);
    const chosen = await selectionPost(
      "/select_and_reserve",
      body(p, { token_ids: range(1, 8), owner: "fe" }),
    );
    expect(chosen.status).toBe(200);
    const explicit = await selectionPost(
      "/reservations",
      body(p, { selection_id: "x", worker_id: 9, token_ids: range(1, 8), owner: "fe" }),
    );
    expect(explicit.status).toBe(201);
    expect(
      (await selectionPost("/select", body(p, { selection_id: "pend", token_ids: range(1, 4) }))).status,
    ).toBe(200);
    expect(
      (await selectionPost("/reservations", body(p, { selection_id: "pend", owner: "fe" }))).status,
    ).toBe(201);
    expect(await leasesOf(p)).toMatchObject([{ owner: "fe", bookings: 3 }]);
    expect(await slotLoads(p)).not.toBe(idle);
    expect(jsonOf(await selectionCall("DELETE", `/leases/fe?model_name=${p.model}`), 200)).toEqual({
      owner: "fe",
      freed: 3,
    });
    expect(await slotLoads(p)).toBe(idle);
    expect(jsonOf(await selectionCall("DELETE", "/reservations/x"), 404)).toEqual({
      error: "reservation x not found",
    });
  });

  it("refuse a bad owner in serde's words (422)", async () => {
    const p = uniquePartition("sel-owned-bad");
    await schedule(p, [{ workerId: 9n }]);
    const before = await slotLoads(p);
    for (const [path, fields] of [
      ["/select_and_reserve", { token_ids: range(1, 4), owner: "" }],
      ["/reservations", { selection_id: "x", worker_id: 9, token_ids: range(1, 4), owner: 5 }],
    ] as const) {
      const refused = jsonOf(await selectionPost(path, body(p, fields)), 422);
      expect(refused.error).toMatch(
        /^Failed to deserialize the JSON body into the target type: owner: invalid /,
      );
    }
    expect(await slotLoads(p)).toBe(before);
  });
});
