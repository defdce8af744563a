/**
 * The typed client's selection booking methods against the real Worker and its objects: choosing,
 * booking (in one step, by replay and explicitly), a reservation's lifecycle, the load views and
 * the cache index, with 64-bit hashes and ids exact and refusals as `SlotTrackerError`.
 */
import { describe, expect, it } from "vitest";
import { type SelectionClient, selectionClient } from "../../src/client";
import { refusal, viaWorker } from "./client-calls";

const BLOCK_SIZE = 4;
/** Above 2^53: `Number(BIG)` would round it. */
const BIG = (1n << 64n) - 5n;
/** Dynamo's tracking hashes (public-xxh3-v1) of tokens 1..=4 and 1..=8 in blocks of 4, as i64. */
const HASHES_1_8 = [-3803038269031200164n, 4945711292740353085n];

const tokens = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** A client and a partition of its own with one schedulable worker, `BIG`, of `dpSize` ranks. */
async function scheduled(model: string, dpSize = 1): Promise<SelectionClient> {
  const sel = selectionClient("http://tracker", { fetch: viaWorker });
  const record = await sel.upsertWorker({
    worker_id: BIG,
    model_name: model,
    endpoint: "http://big",
    block_size: BLOCK_SIZE,
    data_parallel_size: dpSize,
  });
  expect(record.lifecycle).toBe("schedulable");
  return sel;
}

/** The one partition's rank `rank` in `/selection/loads`. */
async function rankLoad(sel: SelectionClient, model: string, rank = 0) {
  const [partition, ...others] = await sel.loads({ model_name: model });
  expect(others).toEqual([]);
  return partition?.loads.find((load) => load.dp_rank === rank);
}

describe("the typed client's selection bookings", () => {
  it("books in one step with selectAndReserve, its booking facts exact, and frees it", async () => {
    const model = "client-book-one-step";
    const sel = await scheduled(model);
    const booked = await sel.selectAndReserve({
      model_name: model,
      selection_id: "s-1",
      token_ids: tokens(1, 8),
    });
    expect(booked).toEqual({
      selection_id: "s-1",
      sequence_hashes: HASHES_1_8,
      isl_tokens: 8,
      track_prefill_tokens: true,
      model_name: model,
      routing_group: "default",
      worker_id: BIG,
      dp_rank: 0,
      endpoint: "http://big",
      block_size: BLOCK_SIZE,
      overlap: { longest_matched: 0, gpu: 0, dp: { "0": 0 }, cpu: 0, disk: 0 },
      effective_prefill_tokens: 8,
      potential_decode_blocks: 2,
    });
    expect(await rankLoad(sel, model)).toMatchObject({ worker_id: BIG, active_requests: 1 });
    expect(
      await refusal(sel.selectAndReserve({ model_name: model, selection_id: "s-1", token_ids: [1] })),
    ).toEqual({
      status: 409,
      message: "selection s-1 is already reserved or being reserved",
    });
    await sel.freeReservation("s-1");
    expect(await rankLoad(sel, model)).toMatchObject({ active_requests: 0, potential_decode_blocks: 0 });
    expect(await refusal(sel.freeReservation("s-1"))).toEqual({
      status: 404,
      message: "reservation s-1 not found",
    });
  });

  it("selects without booking, then books the pending choice by replay and runs its lifecycle", async () => {
    const model = "client-book-replay";
    const sel = await scheduled(model);
    // Any character may be in an id: the client encodes it into the path.
    const id = "chat/7 ü?#";
    const chosen = await sel.select({ model_name: model, selection_id: id, token_ids: tokens(1, 8) });
    expect(chosen).toMatchObject({
      selection_id: id,
      worker_id: BIG,
      dp_rank: 0,
      potential_decode_blocks: 2,
    });
    expect(chosen.sequence_hashes).toBeUndefined();
    expect(await rankLoad(sel, model)).toMatchObject({ active_requests: 0 });

    const replayed = await sel.createReservation({ model_name: model, selection_id: id });
    expect(replayed).toEqual({
      selection_id: id,
      model_name: model,
      routing_group: "default",
      worker_id: BIG,
      dp_rank: 0,
      endpoint: "http://big",
    });
    expect(await rankLoad(sel, model)).toMatchObject({
      active_requests: 1,
      potential_prefill_tokens: 8,
      potential_decode_blocks: 2,
    });
    await sel.prefillComplete(id);
    expect(await rankLoad(sel, model)).toMatchObject({ potential_prefill_tokens: 0 });
    await sel.outputBlock(id);
    await sel.outputBlock(id, { decay_fraction: 0.5 });
    expect(await rankLoad(sel, model)).toMatchObject({ potential_decode_blocks: 4 });
    await sel.freeReservation(id);
    expect(await rankLoad(sel, model)).toMatchObject({ active_requests: 0, potential_decode_blocks: 0 });
    expect(await refusal(sel.prefillComplete(id))).toEqual({
      status: 404,
      message: `reservation ${id} not found`,
    });
  });

  it("books explicitly on a named rank and refuses what Dynamo refuses, in its words", async () => {
    const model = "client-book-explicit";
    const sel = await scheduled(model, 2);
    const reserved = await sel.createReservation({
      model_name: model,
      selection_id: "r-1",
      worker_id: BIG,
      dp_rank: 1,
      sequence_hashes: HASHES_1_8,
      isl_tokens: 8,
      effective_prefill_tokens: 6,
    });
    expect(reserved).toMatchObject({ selection_id: "r-1", worker_id: BIG, dp_rank: 1 });
    expect(await rankLoad(sel, model, 1)).toMatchObject({
      active_requests: 1,
      potential_prefill_tokens: 6,
      potential_decode_blocks: 2,
    });
    expect(await refusal(sel.outputBlock("r-1", { decay_fraction: 1.5 }))).toEqual({
      status: 400,
      message: "decay_fraction must be between 0.0 and 1.0",
    });
    expect(await refusal(sel.select({ model_name: model, isl_tokens: 4 }))).toEqual({
      status: 400,
      message: "block_hashes is required without token_ids",
    });
    const mistyped = await refusal(
      sel.select({ model_name: model, token_ids: [1, 2], expected_output_tokens: -1 }),
    );
    expect(mistyped.status).toBe(422);
    expect(mistyped.message).toContain("expected_output_tokens: invalid value: integer `-1`, expected u32");
  });

  it("reads potential loads, overlap scores and the dump of what a booking recorded", async () => {
    const model = "client-book-index";
    const sel = await scheduled(model);
    await sel.selectAndReserve({ model_name: model, selection_id: "w", token_ids: tokens(1, 8) });
    await sel.freeReservation("w");
    // The freed booking's prompt stays in the cache index: 2 of the 3 blocks are credited.
    expect(
      await sel.potentialLoads({
        model_name: model,
        token_ids: tokens(1, 12),
        router_config_override: { overlap_score_credit: 1 },
      }),
    ).toEqual([
      {
        worker_id: BIG,
        dp_rank: 0,
        potential_prefill_tokens: 4,
        potential_decode_blocks: 3,
        active_requests: 0,
      },
    ]);
    const scores = await sel.overlapScores({ model_name: model, token_ids: tokens(1, 12) });
    expect(scores).toMatchObject({ block_size: BLOCK_SIZE, num_blocks: 3 });
    expect(scores.workers).toEqual([
      expect.objectContaining({ worker_id: BIG, dp_rank: 0, device_blocks: 2, router_credit_blocks: 2 }),
    ]);
    expect(scores.shared_cache).toEqual({ enabled: false, total_hit_blocks: 0, ranges: [] });
    const dump = await sel.dump();
    const events = dump[`${model}:default`]?.events ?? [];
    expect(events.map((e) => [e.worker_id, e.event.dp_rank, e.event.data.stored.blocks.length])).toEqual([
      [BIG, 0, 2],
    ]);
  });
});
