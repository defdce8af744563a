/**
 * Selection bookings across replicas: a reservation made at one replica is seen, prefill-completed
 * and freed at the others, and every replica's cache index holds the same entries once the bookings
 * have reached it. Every read waits for convergence before it is compared.
 */
import { describe, expect, it } from "vitest";
import { parseExact } from "../workers/api-http";
import { catalogRecord, range } from "../workers/booking-http";
import { send, toJson } from "../workers/reliability-http";
import { converged, post, REPLICAS, type Replica, workers } from "./fault-helpers";

const at = (replica: Replica) => ({ "x-slot-tracker-replica": replica });

function selection(replica: Replica, method: string, path: string, body?: unknown) {
  return send(method, `/selection${path}`, {
    headers: { ...at(replica), ...(body !== undefined && { "content-type": "application/json" }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
}

/** Makes workers 1 and 2 (one rank each, block size 4) schedulable at east, and waits for every replica. */
async function partition(): Promise<string> {
  const model = `sel-repl-${crypto.randomUUID()}`;
  const p = { model, group: "default" };
  for (const workerId of [1n, 2n]) {
    const answer = await post("east", "/selection/workers", catalogRecord(p, { workerId }));
    expect(answer.status).toBe(201);
  }
  await converged((r) => workers(r, model));
  await converged((r) => catalogListing(r, model));
  return model;
}

async function catalogListing(replica: Replica, model: string) {
  return (await selection(replica, "GET", `/workers?model_name=${model}`)).text;
}

async function selectionLoads(replica: Replica, model: string) {
  return (await selection(replica, "GET", `/loads?model_name=${model}`)).text;
}

describe("selection bookings across replicas", () => {
  it("books at east, completes prefill at west and frees at apac", async () => {
    const model = await partition();
    const booked = await selection("east", "POST", "/select_and_reserve", {
      model_name: model,
      selection_id: "x",
      token_ids: range(1, 8),
    });
    expect(booked.status).toBe(200);
    const chosen = parseExact(booked.text) as { worker_id: number };
    const seen = JSON.parse(await converged((r) => selectionLoads(r, model))) as {
      loads: { worker_id: number; potential_prefill_tokens: number; active_requests: number }[];
    }[];
    expect(seen[0]!.loads.find((l) => l.worker_id === chosen.worker_id)).toMatchObject({
      potential_prefill_tokens: 8,
      active_requests: 1,
    });

    expect((await selection("west", "POST", "/reservations/x/prefill_complete")).status).toBe(200);
    const completed = JSON.parse(await converged((r) => selectionLoads(r, model))) as typeof seen;
    expect(completed[0]!.loads.map((l) => l.potential_prefill_tokens)).toEqual([0, 0]);

    expect((await selection("apac", "DELETE", "/reservations/x")).status).toBe(200);
    const freed = JSON.parse(await converged((r) => selectionLoads(r, model))) as typeof seen;
    expect(freed[0]!.loads.map((l) => l.active_requests)).toEqual([0, 0]);
    for (const replica of REPLICAS) {
      expect((await selection(replica, "DELETE", "/reservations/x")).status, replica).toBe(404);
    }
  });

  it("holds the same cache index at every replica, and credits the same ranks everywhere", async () => {
    const model = await partition();
    const bookings: [Replica, string, number[], number][] = [
      ["east", "a", range(1, 8), 1],
      ["west", "b", range(1, 12), 2],
      ["apac", "c", range(100, 107), 1],
    ];
    for (const [replica, id, tokens, workerId] of bookings) {
      const answer = await selection(replica, "POST", "/select_and_reserve", {
        model_name: model,
        selection_id: id,
        token_ids: tokens,
        pinned_worker: { worker_id: workerId, dp_rank: 0 },
      });
      expect(answer.status, answer.text).toBe(200);
    }
    // Freed at another replica than booked, once it is there: the index keeps what it recorded.
    await converged((r) => selectionLoads(r, model));
    expect((await selection("apac", "DELETE", "/reservations/a")).status).toBe(200);
    await converged(async (r) => (await selection(r, "GET", `/loads?model_name=${model}`)).text);
    const dumped = await converged(async (r) => {
      const all = parseExact((await selection(r, "GET", "/dump")).text) as Record<string, unknown>;
      return toJson(all[`${model}:default`]);
    });
    const events = (
      JSON.parse(dumped) as {
        events: { worker_id: number; event: { data: { stored: { blocks: unknown[] } } } }[];
      }
    ).events;
    expect(events.map((e) => [e.worker_id, e.event.data.stored.blocks.length])).toEqual([
      [1, 2],
      [1, 2],
      [2, 3],
    ]);
    const scores = await converged(
      async (r) =>
        (await selection(r, "POST", "/overlap_scores", { model_name: model, token_ids: range(1, 12) })).text,
    );
    const rows = (JSON.parse(scores) as { workers: { worker_id: number; device_blocks: number }[] }).workers;
    expect(rows.map((w) => [w.worker_id, w.device_blocks])).toEqual([
      [1, 2],
      [2, 3],
    ]);
  });
});
