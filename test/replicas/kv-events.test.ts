/**
 * Engine KV events across replicas (SPEC §9): the index a replica builds from `/kv_events` calls
 * reaches every other replica, and a sender that moves to another replica starts a new epoch there
 * that every replica ends up agreeing on. Every read waits for convergence before it is compared.
 */
import { describe, expect, it } from "vitest";
import { parseExact, toJson } from "../workers/api-http";
import { catalogRecord, range } from "../workers/booking-http";
import { blockRemoved, blockStored, engineBatch, postKv } from "../workers/kv-http";
import { send } from "../workers/reliability-http";
import { converged, post, type Replica, workers } from "./fault-helpers";

const at = (replica: Replica) => ({ "x-slot-tracker-replica": replica });

async function partition(): Promise<{ model: string; group: string }> {
  const p = { model: `kv-repl-${crypto.randomUUID()}`, group: "default" };
  for (const workerId of [1n, 2n]) {
    expect((await post("east", "/selection/workers", catalogRecord(p, { workerId }))).status).toBe(201);
  }
  await converged((r) => workers(r, p.model));
  return p;
}

/** A replica's dump of the partition's index and the overlap rows of a 16-token prompt. */
async function indexAt(replica: Replica, p: { model: string }): Promise<string> {
  const dump = await send("GET", "/selection/dump", { headers: at(replica) });
  const scores = await send("POST", "/selection/overlap_scores", {
    headers: { ...at(replica), "content-type": "application/json" },
    body: JSON.stringify({ model_name: p.model, token_ids: range(1, 16) }),
  });
  return `${toJson((parseExact(dump.text) as Record<string, unknown>)[`${p.model}:default`])} ${scores.text}`;
}

describe("KV events across replicas", () => {
  it("gives every replica the index the events built at one", async () => {
    const p = await partition();
    const calls = [
      engineBatch([blockStored([1, 2, 3, 4])]),
      engineBatch([blockRemoved([4]), blockStored([4], 3, "CPU")]),
      engineBatch([blockStored([9])]),
    ];
    for (const [seq, batch] of calls.entries()) {
      expect((await postKv(p, { workerId: 2n, seq, replica: "east" }, batch)).status).toBe(200);
    }
    expect(
      (await postKv(p, { workerId: 1n, seq: 0, replica: "east" }, engineBatch([blockStored([1])]))).status,
    ).toBe(200);
    const index = await converged((r) => indexAt(r, p));
    expect(index).toContain('"device_blocks":3');
    // Block 4 left the device for host memory: it continues the device run there.
    expect(index).toContain('"device_blocks":3,"host_pinned_blocks":4');
  });

  it("agrees everywhere on the epoch a sender starts at another replica, and on what it cleared", async () => {
    const p = await partition();
    expect(
      (await postKv(p, { workerId: 1n, seq: 0, replica: "east" }, engineBatch([blockStored([1, 2, 3])])))
        .status,
    ).toBe(200);
    await converged((r) => indexAt(r, p));
    // Same epoch name, another replica: west cannot know it has every batch east took.
    const moved = await postKv(p, { workerId: 1n, seq: 1, replica: "west" }, engineBatch([blockStored([7])]));
    expect(parseExact(moved.text)).toEqual({ applied: 1, ignored: 0, next_seq: 2 });
    const index = await converged((r) => indexAt(r, p));
    const scores = JSON.parse(index.slice(index.indexOf(" ") + 1)) as {
      workers: { device_blocks: number }[];
    };
    expect(scores.workers.map((w) => w.device_blocks)).toEqual([0, 0]);
    // Back at east, the epoch is west's now: east starts its own, and everyone follows again.
    const back = await postKv(p, { workerId: 1n, seq: 2, replica: "east" }, engineBatch([blockStored([1])]));
    expect(parseExact(back.text)).toEqual({ applied: 1, ignored: 0, next_seq: 3 });
    expect(await converged((r) => indexAt(r, p))).toContain('"device_blocks":1');
  });
});
