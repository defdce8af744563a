/**
 * `POST /kv_events` over HTTP against real tracker objects (SPEC §9): engine batches change what
 * `/selection/overlap_scores`, `/selection/select` and `/route` see; a gap is refused with the number
 * expected and changes nothing; repeats are acknowledged; a restart keeps the index; bad calls are a
 * 4xx naming the problem and change nothing.
 */
import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parseExact, toJson } from "./api-http";
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
import { blockRemoved, blockStored, concat, engineBatch, postKv } from "./kv-http";
import { postJson, send } from "./reliability-http";

/** Device blocks of each worker (rank 0) for the prompt of `tokens`, from `/selection/overlap_scores`. */
async function deviceBlocks(p: Partition, tokens: number[]): Promise<Record<string, number>> {
  const scores = jsonOf(await selectionPost("/overlap_scores", body(p, { token_ids: tokens })), 200) as {
    workers: { worker_id: number; device_blocks: number }[];
  };
  return Object.fromEntries(scores.workers.map((w) => [String(w.worker_id), w.device_blocks]));
}

/** What a refused call must leave as it was: the index's dump and the overlap of a prompt. */
async function indexText(p: Partition): Promise<string> {
  const dump = await selectionCall("GET", "/dump");
  const scores = await selectionPost("/overlap_scores", body(p, { token_ids: range(1, 16) }));
  return `${toJson((parseExact(dump.text) as Record<string, unknown>)[`${p.model}:default`])} ${scores.text}`;
}

describe("POST /kv_events", () => {
  it("makes overlap_scores, select and route see what the engine stored, and what it removed", async () => {
    const p = uniquePartition("kv");
    await schedule(p, [{ workerId: 1n }, { workerId: 2n }]);
    const stored = await postKv(p, { workerId: 2n, seq: 0 }, engineBatch([blockStored([1, 2, 3])]));
    expect({ status: stored.status, json: parseExact(stored.text) }).toEqual({
      status: 200,
      json: { applied: 1, ignored: 0, next_seq: 1 },
    });
    expect(await deviceBlocks(p, range(1, 16))).toEqual({ "1": 0, "2": 3 });
    // Worker 2 is busier (one live request), so only the cached prefix can make it the cheaper one.
    const busy = await postJson("/add", {
      model_name: p.model,
      tenant_id: "default",
      worker_id: 2,
      dp_rank: 0,
      request_id: "busy",
      sequence_hashes: [77],
      new_isl_tokens: 4,
    });
    expect(busy.status).toBe(201);
    const chosen = jsonOf(await selectionPost("/select", body(p, { token_ids: range(1, 12) })), 200);
    expect(chosen).toMatchObject({ worker_id: 2, overlap: { gpu: 12 } });
    const booked = jsonOf(
      await selectionPost("/select_and_reserve", body(p, { selection_id: "r1", token_ids: range(1, 12) })),
      200,
    ) as { worker_id: number; sequence_hashes: bigint[] };
    expect(booked.worker_id).toBe(2);
    await selectionCall("DELETE", "/reservations/r1");
    const routed = await send("POST", "/route", {
      body: toJson({
        model_name: p.model,
        tenant_id: "default",
        request_id: "routed",
        sequence_hashes: booked.sequence_hashes,
        new_isl_tokens: 12,
      }),
      headers: { "content-type": "application/json" },
    });
    expect(routed.status, routed.text).toBe(201);
    expect(parseExact(routed.text)).toMatchObject({ worker_id: 2 });

    const removed = await postKv(p, { workerId: 2n, seq: 1 }, engineBatch([blockRemoved([2])]));
    expect(removed.status).toBe(200);
    expect(await deviceBlocks(p, range(1, 16))).toEqual({ "1": 0, "2": 1 });
  });

  it("takes several batches in one body, numbered from the header, at the root and under /selection", async () => {
    const p = uniquePartition("kv-multi");
    await schedule(p, [{ workerId: 5n }]);
    const bodyOf = concat(engineBatch([blockStored([1])]), engineBatch([blockStored([2, 3], 1)]));
    const answer = await postKv(p, { workerId: 5n, seq: 10, path: "/selection/kv_events" }, bodyOf);
    expect(parseExact(answer.text)).toEqual({ applied: 2, ignored: 0, next_seq: 12 });
    expect(await deviceBlocks(p, range(1, 16))).toEqual({ "5": 3 });
    const again = await postKv(
      p,
      { workerId: 5n, seq: 11 },
      concat(engineBatch([blockStored([2, 3], 1)]), engineBatch([blockStored([4], 3)])),
    );
    expect(parseExact(again.text)).toEqual({ applied: 1, ignored: 1, next_seq: 13 });
    expect(await deviceBlocks(p, range(1, 16))).toEqual({ "5": 4 });
  });

  it("refuses a batch past the next expected one with 409 and expected_seq, and changes nothing", async () => {
    const p = uniquePartition("kv-gap");
    await schedule(p, [{ workerId: 1n }]);
    await postKv(p, { workerId: 1n, seq: 3 }, engineBatch([blockStored([1, 2])]));
    const before = await indexText(p);
    const gap = await postKv(p, { workerId: 1n, seq: 5 }, engineBatch([blockRemoved([1, 2])]));
    expect(gap.status).toBe(409);
    expect(parseExact(gap.text)).toEqual({
      error:
        'KV event batch 5 is out of sequence for worker WorkerWithDpRank { worker_id: 1, dp_rank: 0 } in epoch "epoch-1": expected 4',
      expected_seq: 4,
    });
    expect(await indexText(p)).toBe(before);
    const repeat = await postKv(p, { workerId: 1n, seq: 3 }, engineBatch([blockRemoved([1, 2])]));
    expect(parseExact(repeat.text)).toEqual({ applied: 0, ignored: 1, next_seq: 4 });
    expect(await indexText(p)).toBe(before);
  });

  it("clears the rank when a new epoch starts, whatever its first number", async () => {
    const p = uniquePartition("kv-epoch");
    await schedule(p, [{ workerId: 1n }]);
    await postKv(p, { workerId: 1n, seq: 0 }, engineBatch([blockStored([1, 2, 3])]));
    const restarted = await postKv(
      p,
      { workerId: 1n, seq: 0, epoch: "epoch-2" },
      engineBatch([blockStored([1])]),
    );
    expect(parseExact(restarted.text)).toEqual({ applied: 1, ignored: 0, next_seq: 1 });
    expect(await deviceBlocks(p, range(1, 16))).toEqual({ "1": 1 });
  });

  it("keeps the index and each rank's sequence across a restart of every object", async () => {
    const p = uniquePartition("kv-restart");
    await schedule(p, [{ workerId: 1n, dpSize: 2 }]);
    await postKv(p, { workerId: 1n, seq: 0 }, engineBatch([blockStored([1, 2, 3])]));
    await postKv(p, { workerId: 1n, seq: 0, dpRank: 1 }, engineBatch([blockStored([1])], 1));
    await postKv(p, { workerId: 1n, seq: 1 }, engineBatch([blockRemoved([3])]));
    const before = await indexText(p);
    await abortAllDurableObjects();
    expect(await indexText(p)).toBe(before);
    const next = await postKv(p, { workerId: 1n, seq: 2 }, engineBatch([blockStored([3], 2)]));
    expect(parseExact(next.text)).toEqual({ applied: 1, ignored: 0, next_seq: 3 });
    const gap = await postKv(p, { workerId: 1n, seq: 3, dpRank: 1 }, engineBatch([blockStored([2], 1)], 1));
    expect(parseExact(gap.text)).toMatchObject({ expected_seq: 1 });
  });

  it("answers a 4xx naming the problem for calls it cannot apply, and changes nothing", async () => {
    const p = uniquePartition("kv-bad");
    await schedule(p, [{ workerId: 1n }]);
    await postKv(p, { workerId: 1n, seq: 0 }, engineBatch([blockStored([1])]));
    const before = await indexText(p);
    const good = engineBatch([blockStored([2], 1)]);
    const cases: [Promise<{ status: number; text: string }>, number, string][] = [
      [
        postKv(p, { workerId: 1n, seq: 1, headers: { "content-type": "application/json" } }, good),
        415,
        "MessagePack",
      ],
      [
        postKv(p, { workerId: 1n, seq: 1, headers: { "x-kv-event-seq": "one" } }, good),
        400,
        "x-kv-event-seq",
      ],
      [
        postKv(p, { workerId: 1n, seq: 1, headers: { "x-kv-event-epoch": "" } }, good),
        400,
        "x-kv-event-epoch",
      ],
      [postKv(p, { workerId: 9n, seq: 1 }, good), 404, "worker_id: 9"],
      [postKv(p, { workerId: 1n, seq: 1, dpRank: 3 }, good), 404, "dp_rank: 3"],
      [postKv(p, { workerId: 1n, seq: 1 }, new Uint8Array([0x93, 0xcb])), 400, "MessagePack"],
      [
        postKv(p, { workerId: 1n, seq: 1, dpRank: 0 }, engineBatch([blockStored([2], 1)], 1)),
        400,
        "data_parallel_rank 1",
      ],
      [
        postKv(
          p,
          { workerId: 1n, seq: 1 },
          engineBatch([["BlockStored", [5n], null, [1, 2, 3, 4, 5, 6, 7, 8], 8, null, "GPU", null]]),
        ),
        400,
        "block_size 8",
      ],
    ];
    for (const [answer, status, text] of cases) {
      const got = await answer;
      expect({ status: got.status, text: got.text }).toMatchObject({
        status,
        text: expect.stringContaining(text),
      });
    }
    const query = `/kv_events?model_name=${p.model}&worker_id=x`;
    const badQuery = await send("POST", query, {
      body: good,
      headers: { "content-type": "application/msgpack" },
    });
    expect(badQuery.status).toBe(422);
    expect(await indexText(p)).toBe(before);
  });
});
