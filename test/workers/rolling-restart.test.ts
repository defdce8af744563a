/**
 * A rolling restart over HTTP (SPEC §8, the harm leases exist for): two frontends with leases book
 * on the four ranks of one worker; one dies (stops renewing). Once its lease's deadline has passed,
 * the alarm frees its bookings, so its ranks are idle again within its ttl, while the survivor's stay
 * booked; without leases they would have waited for the expiry age. The dying frontend's ttl is the
 * short one (2 s); the survivor's is long, so that no heartbeat of its can be late on a slow machine.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Tracker } from "../../durable-objects/core/tracker";
import { DEFAULT_REQUEST_EXPIRY_SECONDS } from "../../durable-objects/limits";
import { trackerStub, uniqueKey, waitFor } from "./helpers";
import { parsePrometheus, sampleValue } from "./prometheus-text";
import { type Answer, postJson, send } from "./reliability-http";

const DYING_TTL = 2_000;
const SURVIVOR_TTL = 120_000;
/** How long to wait for the real alarm: alarms may fire late on a busy machine. */
const ALARM_WAIT_MS = 30_000;

interface Load {
  dp_rank: number;
  active_prefill_tokens: number;
  active_decode_blocks: number;
}

const ok = (answer: Answer, status = 200) => {
  expect(answer.status, answer.text).toBe(status);
  return JSON.parse(answer.text) as unknown;
};

async function getJson(path: string, model: string): Promise<unknown> {
  return ok(await send("GET", `${path}?${new URLSearchParams({ model_name: model })}`));
}

const busy = (loads: Load[]) =>
  loads.filter((l) => l.active_decode_blocks > 0 || l.active_prefill_tokens > 0).map((l) => l.dp_rank);

describe("rolling restart", () => {
  it("frees a dead frontend's ranks at its lease deadline, not at the expiry age, and keeps the survivor's", async () => {
    const key = uniqueKey("rolling");
    const model = key.model;
    const stub = trackerStub(key);
    ok(
      await postJson("/register", {
        model_name: model,
        worker_id: 1,
        block_size: 16,
        dp_start: 0,
        dp_size: 4,
      }),
      201,
    );
    const lease = async (owner: string, ttl: number) =>
      ok(await postJson("/leases", { model_name: model, owner, ttl_ms: ttl })) as { expires_at_ms: number };
    const booking = (owner: string, id: string, rank: number) => ({
      request_id: id,
      worker_id: 1,
      dp_rank: rank,
      sequence_hashes: [rank * 10 + 1, rank * 10 + 2],
      new_isl_tokens: 32,
      owner,
    });

    // The survivor books ranks 2 and 3.
    await lease("fe-b", SURVIVOR_TTL);
    for (const rank of [2, 3]) {
      ok(await postJson("/add", { model_name: model, ...booking("fe-b", `b${rank}`, rank) }), 201);
    }
    // The one that will die books ranks 0 and 1 right after its lease, in one batch.
    const before = Date.now();
    const { expires_at_ms: deadline } = await lease("fe-a", DYING_TTL);
    const batch = ok(
      await postJson("/batch", {
        model_name: model,
        ops: [
          { op: "add", ...booking("fe-a", "a0", 0) },
          { op: "add", ...booking("fe-a", "a1", 1) },
        ],
      }),
    );
    expect(batch).toEqual({ results: [{ status: 201 }, { status: 201 }] });

    // fe-a dies: it never renews. Its batch's answers show it booked; no further read is made
    // within its ttl, which a slow machine could overrun. Nothing calls the tracker until its
    // bookings are gone from the object's book (read from memory: a read through its methods
    // would expire lazily, and a batch's rows sit in the request journal), so only the alarm can
    // have freed them.
    const live = () =>
      runInDurableObject(stub, (instance) =>
        [...(instance as unknown as { tracker: Tracker }).tracker.book.requests.keys()].sort(),
      );
    expect(
      await waitFor(async () => (await live()).join() === "b2,b3", ALARM_WAIT_MS),
      "fe-a's bookings freed",
    ).toBe(true);
    expect(Date.now()).toBeGreaterThanOrEqual(deadline);

    // Freed at the lease's deadline, within its ttl of the booking: far younger than the age at
    // which they would otherwise have expired (300 s by default, 600 s in this project).
    expect(deadline - before).toBeLessThan(DEFAULT_REQUEST_EXPIRY_SECONDS * 1000);
    expect(deadline - before).toBeLessThan(Number(env.REQUEST_EXPIRY_SECONDS) * 1000);

    expect(busy((await getJson("/loads", model)) as Load[])).toEqual([2, 3]);
    expect(await getJson("/leases", model)).toEqual([
      { owner: "fe-b", expires_at_ms: expect.any(Number), bookings: 2 },
    ]);
    const metrics = await send("GET", `/metrics?${new URLSearchParams({ model_name: model })}`);
    const parsed = parsePrometheus(metrics.text);
    expect(sampleValue(parsed, "slot_tracker_lease_freed_bookings_total", { model })).toBe(2);
    expect(sampleValue(parsed, "slot_tracker_owned_bookings", { model, owner: "fe-b" })).toBe(2);
    expect(sampleValue(parsed, "slot_tracker_owned_bookings", { model, owner: "fe-a" })).toBeUndefined();

    // The survivor's heartbeat goes on. The restarted frontend comes back under its id with a new
    // lease: its old bookings stay freed, and it books afresh.
    await lease("fe-b", SURVIVOR_TTL);
    await lease("fe-a", SURVIVOR_TTL);
    expect(await getJson("/leases", model)).toEqual([
      { owner: "fe-a", expires_at_ms: expect.any(Number), bookings: 0 },
      { owner: "fe-b", expires_at_ms: expect.any(Number), bookings: 2 },
    ]);
    expect(busy((await getJson("/loads", model)) as Load[])).toEqual([2, 3]);
    ok(await postJson("/add", { model_name: model, ...booking("fe-a", "a0-again", 0) }), 201);
    expect(busy((await getJson("/loads", model)) as Load[])).toEqual([0, 2, 3]);
  });
});
