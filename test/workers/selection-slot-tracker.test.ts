/**
 * One tracker, two APIs (SPEC §7): a selection booking is a live request of the slot-tracker API
 * (its `/loads`, `/potential_loads`, `/free`), a slot-tracker booking is a reservation of the
 * selection API (its lifecycle routes), and `/route` is credited for what selection bookings cached.
 */
import { describe, expect, it } from "vitest";
import { parseExact } from "./api-http";
import { body, jsonOf, range, schedule, selectionCall, selectionPost, uniquePartition } from "./booking-http";
import { postJson, send } from "./reliability-http";

const B_1_4 = 14643705804678351452n;
const S_5_8 = 4945711292740353085n;

async function slotLoads(model: string) {
  const answer = await send("GET", `/loads?model_name=${model}&tenant_id=default`);
  return parseExact(answer.text) as Record<string, unknown>[];
}

describe("one tracker, two APIs", () => {
  it("shows a selection booking in the slot-tracker /loads and /potential_loads, and /free ends it", async () => {
    const p = uniquePartition();
    await schedule(p, [{ workerId: 9n }]);
    await selectionPost("/select_and_reserve", body(p, { selection_id: "s", token_ids: range(1, 8) }));
    expect(await slotLoads(p.model)).toEqual([
      {
        model_name: p.model,
        tenant_id: "default",
        worker_id: 9,
        dp_rank: 0,
        active_prefill_tokens: 8,
        active_decode_blocks: 2,
      },
    ]);
    const potential = await postJson("/potential_loads", {
      model_name: p.model,
      sequence_hashes: [B_1_4, S_5_8, 77],
      new_isl_tokens: 12,
    });
    expect(parseExact(potential.text)).toEqual([
      {
        worker_id: 9,
        dp_rank: 0,
        potential_prefill_tokens: 20,
        potential_decode_blocks: 3,
        active_requests: 1,
      },
    ]);
    expect((await postJson("/free", { model_name: p.model, request_id: "s" })).status).toBe(200);
    expect((await slotLoads(p.model))[0]).toMatchObject({
      active_prefill_tokens: 0,
      active_decode_blocks: 0,
    });
    expect(jsonOf(await selectionCall("DELETE", "/reservations/s"), 404)).toEqual({
      error: "reservation s not found",
    });
  });

  it("runs a slot-tracker booking through the selection lifecycle routes, found by its id alone", async () => {
    const p = uniquePartition();
    await schedule(p, [{ workerId: 9n }]);
    const added = await postJson("/add", {
      model_name: p.model,
      request_id: "legacy-1",
      worker_id: 9,
      dp_rank: 0,
      sequence_hashes: [1, 2],
      new_isl_tokens: 8,
    });
    expect(added.status).toBe(201);
    const selectionLoads = async () =>
      (
        jsonOf(await selectionCall("GET", `/loads?model_name=${p.model}`), 200) as unknown as {
          loads: Record<string, number>[];
        }[]
      )[0]!.loads[0]!;
    expect(await selectionLoads()).toMatchObject({ potential_prefill_tokens: 8, active_requests: 1 });
    expect((await selectionCall("POST", "/reservations/legacy-1/prefill_complete")).status).toBe(200);
    expect((await slotLoads(p.model))[0]).toMatchObject({
      active_prefill_tokens: 0,
      active_decode_blocks: 2,
    });
    expect((await selectionCall("DELETE", "/reservations/legacy-1")).status).toBe(200);
    expect(await selectionLoads()).toMatchObject({ potential_decode_blocks: 0, active_requests: 0 });
  });

  it("credits /route for blocks a freed selection booking of the same public chain cached", async () => {
    const p = uniquePartition();
    await schedule(p, [{ workerId: 1n }, { workerId: 2n }]);
    const booked = jsonOf(
      await selectionPost("/select_and_reserve", body(p, { selection_id: "warm", token_ids: range(1, 8) })),
      200,
    );
    await selectionCall("DELETE", "/reservations/warm");
    for (let i = 0; i < 4; i++) {
      const routed = await postJson("/route", {
        model_name: p.model,
        request_id: `r${i}`,
        sequence_hashes: [B_1_4, S_5_8, 1000 + i],
        new_isl_tokens: 12,
      });
      const answer = parseExact(routed.text) as { worker_id: bigint | number; cost: Record<string, number> };
      expect(answer.worker_id).toBe(booked.worker_id);
      expect(answer.cost.cached_blocks).toBe(2);
      await postJson("/free", { model_name: p.model, request_id: `r${i}` });
    }
  });
});
