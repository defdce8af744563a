/**
 * `/select` → `/reservations` replay rules (reference selection §1.6) over HTTP: single use, a
 * failure keeps the pending selection for a retry, a reserved id conflicts, an explicit reservation
 * discards the pending one, and a rank taken away makes a replay 404 until it is back.
 */
import { describe, expect, it } from "vitest";
import {
  body,
  jsonOf,
  range,
  schedule,
  selectionCall,
  selectionPost,
  unschedule,
  uniquePartition,
} from "./booking-http";
import { postJson } from "./reliability-http";

const pending = (id: string, model: string) =>
  `no pending selection ${id} for model=${model} routing_group=default (expired, already used, or never selected)`;

describe("select then reserve", () => {
  it("books the cached choice once; a second replay finds nothing pending", async () => {
    const p = uniquePartition();
    await schedule(p, [{ workerId: 1n }, { workerId: 2n }]);
    const chosen = jsonOf(
      await selectionPost("/select", body(p, { selection_id: "a", token_ids: range(1, 8) })),
      200,
    );
    expect(chosen.selection_id).toBe("a");
    const reserved = jsonOf(await selectionPost("/reservations", body(p, { selection_id: "a" })), 201);
    expect(reserved).toEqual({
      selection_id: "a",
      model_name: p.model,
      routing_group: "default",
      worker_id: chosen.worker_id,
      dp_rank: 0,
      endpoint: `http://w${chosen.worker_id}`,
    });
    const again = await selectionPost("/reservations", body(p, { selection_id: "a" }));
    expect(jsonOf(again, 404)).toEqual({ error: pending("a", p.model) });
  });

  it("keeps the pending selection through failed replays, so the retry books it", async () => {
    const p = uniquePartition();
    await schedule(p, [{ workerId: 1n }]);
    await selectionPost("/select", body(p, { selection_id: "k", token_ids: range(1, 8) }));
    // Nothing schedulable: 503, and the entry stays.
    await unschedule([1n]);
    const unready = await selectionPost("/reservations", body(p, { selection_id: "k" }));
    expect(jsonOf(unready, 503).error).toBe(
      `no schedulable workers for model=${p.model} routing_group=default`,
    );
    await schedule(p, [{ workerId: 1n }]);
    // The id booked meanwhile through the slot-tracker API: 409, and the entry stays.
    await postJson("/add", {
      model_name: p.model,
      request_id: "k",
      worker_id: 1,
      dp_rank: 0,
      sequence_hashes: [9],
    });
    const taken = await selectionPost("/reservations", body(p, { selection_id: "k" }));
    expect(jsonOf(taken, 409)).toEqual({ error: "selection k is already reserved or being reserved" });
    await postJson("/free", { model_name: p.model, request_id: "k" });
    expect((await selectionPost("/reservations", body(p, { selection_id: "k" }))).status).toBe(201);
  });

  it("refuses to replay a selection whose id select_and_reserve has booked", async () => {
    const p = uniquePartition();
    await schedule(p, [{ workerId: 1n }]);
    await selectionPost("/select", body(p, { selection_id: "c", token_ids: range(1, 4) }));
    expect(
      (await selectionPost("/select_and_reserve", body(p, { selection_id: "c", token_ids: range(1, 4) })))
        .status,
    ).toBe(200);
    const replay = await selectionPost("/reservations", body(p, { selection_id: "c" }));
    expect(jsonOf(replay, 409)).toEqual({ error: "selection c is already reserved or being reserved" });
  });

  it("discards the pending selection when an explicit reservation books its id", async () => {
    const p = uniquePartition();
    await schedule(p, [{ workerId: 1n }, { workerId: 2n }]);
    await selectionPost(
      "/select",
      body(p, { selection_id: "x", token_ids: range(1, 8), pinned_worker: { worker_id: 1, dp_rank: 0 } }),
    );
    const explicit = await selectionPost(
      "/reservations",
      body(p, { selection_id: "x", worker_id: 2, token_ids: range(1, 8), effective_prefill_tokens: 8 }),
    );
    expect(jsonOf(explicit, 201)).toMatchObject({ worker_id: 2, dp_rank: 0 });
    expect((await selectionCall("DELETE", "/reservations/x")).status).toBe(200);
    const replay = await selectionPost("/reservations", body(p, { selection_id: "x" }));
    expect(jsonOf(replay, 404)).toEqual({ error: pending("x", p.model) });
  });

  it("answers 404 for a replay to a rank the worker no longer has, until the rank is back", async () => {
    const p = uniquePartition();
    await schedule(p, [{ workerId: 4n, dpSize: 2 }]);
    await selectionPost(
      "/select",
      body(p, { selection_id: "d", token_ids: range(1, 8), pinned_worker: { worker_id: 4, dp_rank: 1 } }),
    );
    await schedule(p, [{ workerId: 4n, dpSize: 1 }]);
    const gone = await selectionPost("/reservations", body(p, { selection_id: "d" }));
    expect(jsonOf(gone, 404)).toEqual({
      error: `schedulable worker 4 (dp_rank 1) not found for model=${p.model} routing_group=default`,
    });
    await schedule(p, [{ workerId: 4n, dpSize: 2 }]);
    expect(jsonOf(await selectionPost("/reservations", body(p, { selection_id: "d" })), 201)).toMatchObject({
      dp_rank: 1,
    });
  });
});
