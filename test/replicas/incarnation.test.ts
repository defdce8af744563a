/**
 * Worker incarnations between three replicas: a replacement accepted at one replica drops the old
 * life's bookings there at once and, as one replicated change, at the others, whichever replica
 * had booked them; bookings of the new life made elsewhere stay everywhere, and a reset of every
 * object keeps the new life.
 */
import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { converged, liveBook, loads, post, type Replica, REPLICAS, unique, workers } from "./fault-helpers";

const registration = (model: string, more: object = {}) => ({
  model_name: model,
  worker_id: 1,
  block_size: 16,
  dp_start: 0,
  dp_size: 2,
  ...more,
});

const booking = (model: string, id: string, rank: number, tokens: number) => ({
  model_name: model,
  request_id: id,
  worker_id: 1,
  dp_rank: rank,
  sequence_hashes: [rank + 1],
  new_isl_tokens: tokens,
});

async function accepted(replica: Replica, path: string, body: object, status = 201) {
  const answer = await post(replica, path, body);
  expect(answer.status, `${path} at ${replica}: ${answer.text}`).toBe(status);
}

const liveIds = async (replica: Replica, model: string) => (await liveBook(replica, model)).map((r) => r.id);

describe("worker incarnations between replicas", () => {
  it("drop the old life's bookings at the origin at once and at every other replica once the change arrives", async () => {
    const model = unique();
    await accepted("east", "/register", registration(model, { incarnation: 1 }));
    await converged((r) => workers(r, model));
    await accepted("east", "/add", booking(model, "east-old", 0, 30));
    await accepted("west", "/add", booking(model, "west-old", 1, 20));
    await converged((r) => liveIds(r, model));
    expect(await liveIds("apac", model)).toEqual(["east-old", "west-old"]);

    await accepted("east", "/register", registration(model, { incarnation: 2 }));
    // At the origin, in the same call: both bookings, also the one another replica made.
    expect(await liveIds("east", model)).toEqual([]);
    expect(await loads("east", model)).not.toMatch(/"active_prefill_tokens":[1-9]/);
    const listed = await converged((r) => workers(r, model));
    expect(listed).toContain('"incarnation":2}');
    expect(await converged((r) => liveIds(r, model))).toEqual([]);

    // The new life's bookings, made at another replica once it has the replacement, live everywhere.
    await accepted("west", "/add", booking(model, "west-new", 1, 7));
    expect(await converged((r) => liveIds(r, model))).toEqual(["west-new"]);
  });

  it("keep the replacement through a reset of every object", async () => {
    const model = unique();
    await accepted("west", "/register", registration(model));
    await converged((r) => workers(r, model));
    await accepted("apac", "/add", booking(model, "stale", 0, 9));
    await converged((r) => liveIds(r, model));
    await accepted("west", "/register", registration(model, { incarnation: 1 }));
    await converged((r) => liveIds(r, model));
    await abortAllDurableObjects();
    for (const r of REPLICAS) {
      expect(await liveIds(r, model), r).toEqual([]);
      expect(await workers(r, model), r).toContain('"incarnation":1}');
    }
    // Each replica restored the new life's incarnation: an equal one is the duplicate there too.
    await accepted("east", "/register", registration(model, { incarnation: 1 }), 409);
  });
});
