/**
 * Leases across three replicas on the real clock (SPEC §8): a frontend's heartbeat sent to one
 * replica only keeps the owned bookings of every replica alive past the lease's first deadline,
 * through a reset of every object in the middle; once it stops, each replica frees them at the same
 * deadline, with the same key, and lists the lease no more.
 *
 * The ttl is generous (8 s against a heartbeat of ttl/4) and each renewal waits until every replica
 * lists its new deadline before the next, so a renewal is never late however slow the machine:
 * the lease would lapse only if one renewal took 6 s to reach the replicas. (What a reset alone
 * keeps is `lease-storage.test.ts`'s.)
 */
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { firstTsOf } from "../../durable-objects/core/replica/clock";
import type { Tracker } from "../../durable-objects/core/tracker";
import { send } from "../workers/reliability-http";
import {
  converged,
  loads,
  post,
  registered,
  type Replica,
  REPLICAS,
  stubOf,
  unique,
  waitUntil,
} from "./fault-helpers";

const TTL = 8_000;
const HEARTBEAT = TTL / 4;
const OWNER = "fe-1";
/** How long to wait for a lapse to be applied everywhere: alarms may fire late on a busy machine. */
const LAPSE_WAIT_MS = 60_000;

interface LeaseRow {
  owner: string;
  expires_at_ms: number;
  bookings: number;
}

async function leasesAt(replica: Replica, model: string): Promise<LeaseRow[]> {
  const answer = await send("GET", `/leases?${new URLSearchParams({ model_name: model })}`, {
    headers: { "x-slot-tracker-replica": replica },
  });
  expect(answer.status, answer.text).toBe(200);
  return JSON.parse(answer.text) as LeaseRow[];
}

async function renew(replica: Replica, model: string): Promise<number> {
  const answer = await post(replica, "/leases", { model_name: model, owner: OWNER, ttl_ms: TTL });
  expect(answer.status, answer.text).toBe(200);
  return (JSON.parse(answer.text) as { expires_at_ms: number }).expires_at_ms;
}

/**
 * Waits until every replica lists the lease with `deadline` and `bookings` (each renewal and booking
 * reached them all). Not "until they agree": each replica holding only its own booking is agreement.
 */
async function everywhere(model: string, deadline: number, bookings: number): Promise<void> {
  const expected = JSON.stringify([{ owner: OWNER, expires_at_ms: deadline, bookings }]);
  await waitUntil(async () => {
    const views = await Promise.all(REPLICAS.map((r) => leasesAt(r, model)));
    return views.every((v) => JSON.stringify(v) === expected);
  }, 60_000);
}

/** What a replica holds, read from its object's memory (no call that would expire anything lazily). */
function held(replica: Replica, model: string) {
  return runInDurableObject(stubOf(replica, model), (instance) => {
    const { tracker } = instance as unknown as { tracker: Tracker };
    const lease = tracker.leases.get(OWNER);
    return {
      deadline: lease?.deadline ?? null,
      cuts: lease ? [...lease.cuts] : [],
      bookings: [...tracker.book.requests.values()].map((r) => `${r.id}:${r.owner ?? "-"}`).sort(),
      freed: ["o-east", "o-west", "o-apac"].map((id) => tracker.records.freed.get(id) ?? null),
    };
  });
}

const until = async (at: number) => {
  while (Date.now() < at) await new Promise((resolve) => setTimeout(resolve, 25));
};

describe("leases with replicas", () => {
  it("keeps every replica's owned bookings alive on renewals sent to one replica, through a reset, and frees them everywhere at the lapse", async () => {
    const model = unique();
    await registered(model);
    let deadline = await renew("east", model);
    const firstDeadline = deadline;
    await everywhere(model, deadline, 0);
    // One owned booking made at each replica, under the lease that reached it from east, and one
    // unowned booking, which the lapse must leave alone.
    for (const [i, replica] of REPLICAS.entries()) {
      const add = {
        model_name: model,
        request_id: `o-${replica}`,
        worker_id: 1,
        dp_rank: i,
        sequence_hashes: [i + 1],
        new_isl_tokens: 4,
        owner: OWNER,
      };
      expect((await post(replica, "/add", add)).status).toBe(201);
    }
    const plain = {
      model_name: model,
      request_id: "plain",
      worker_id: 1,
      dp_rank: 3,
      sequence_hashes: [9],
      new_isl_tokens: 4,
    };
    expect((await post("west", "/add", plain)).status).toBe(201);
    await everywhere(model, deadline, 3);
    const bookings = ["o-apac:fe-1", "o-east:fe-1", "o-west:fe-1", "plain:-"];

    // The heartbeat, to east alone, until the first deadline is well past.
    let renewals = 0;
    let renewedAt = Date.now();
    while (Date.now() <= firstDeadline + HEARTBEAT || renewals < 3) {
      await until(renewedAt + HEARTBEAT);
      renewedAt = Date.now();
      const next = await renew("east", model);
      expect(next).toBeGreaterThan(deadline);
      deadline = next;
      await everywhere(model, deadline, 3);
      renewals++;
      if (renewals === 1) {
        // Every object reset between two heartbeats: each comes back with the lease and the bookings.
        const before = await converged((r) => held(r, model));
        await abortAllDurableObjects();
        for (const replica of REPLICAS) expect(await held(replica, model)).toEqual(before);
      }
    }
    // Past the first deadline, west and apac (which no renewal was sent to) still hold them all.
    expect(Date.now()).toBeGreaterThan(firstDeadline);
    const alive = await converged((r) => held(r, model));
    expect(alive).toEqual({ deadline, cuts: [], bookings, freed: [null, null, null] });

    // The frontend stops. Each replica's alarm frees them at the deadline the renewals carried: the
    // same moment, hence the same free key, everywhere.
    const lastDeadline = deadline;
    const freedKey = { ts: firstTsOf(lastDeadline), origin: "" };
    const lapsed = await converged(async (r) => {
      const view = await held(r, model);
      return view.bookings.length === 1 ? view : { waiting: r, ...view };
    }, LAPSE_WAIT_MS);
    expect(lapsed).toEqual({
      deadline: null,
      cuts: [lastDeadline],
      bookings: ["plain:-"],
      freed: [freedKey, freedKey, freedKey],
    });
    for (const replica of REPLICAS) expect(await leasesAt(replica, model)).toEqual([]);
    const left = JSON.parse(await converged((r) => loads(r, model))) as { active_decode_blocks: number }[];
    expect(left.map((row) => row.active_decode_blocks)).toEqual([0, 0, 0, 1]);
  });
});
