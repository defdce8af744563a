/**
 * Resource caps over HTTP: each is refused with 429 or 413 and a message naming the cap, before
 * anything is stored (no SQLite row written, listings unchanged), and the tracker keeps working after.
 * This project runs with MAX_LIVE_REQUESTS=200 and MAX_LIVE_BLOCKS=300000 (vitest.config.ts), so the
 * caps are reached in a few calls; each test fills its tracker over RPC at once.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Tracker } from "../../durable-objects/core/tracker";
import type { TrackerObject } from "../../durable-objects/tracker-object";
import { MAX_BATCH_OPS, MAX_HASHES_PER_CALL, MAX_RANKS, MAX_WORKERS } from "../../durable-objects/limits";
import app from "../../src/app";
import { trackerStub, uniqueKey } from "./helpers";
import { errorOf, listing, postJson, postMsgpack } from "./reliability-http";

/** The object's parts the worker-cap test fills directly (`tracker-object.ts`). */
interface FillSeam {
  tracker: Tracker;
  catalogLink: { update(tracker: Tracker): Promise<void> };
}

const LIVE_CAP = 200;
const BLOCK_CAP = 300_000;

const chain = (from: number, n: number) => BigUint64Array.from({ length: n }, (_, i) => BigInt(from + i));
const numbers = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

async function registered(dpSize = 2) {
  const key = uniqueKey("caps");
  const answer = await postJson("/register", {
    worker_id: 1,
    model_name: key.model,
    block_size: 16,
    dp_start: 0,
    dp_size: dpSize,
  });
  expect(answer.status).toBe(201);
  return { model: key.model, stub: trackerStub(key) };
}

/** The tracker's listings and SQLite write count: what a refused call must leave as it was. */
async function footprint(model: string, stub: ReturnType<typeof trackerStub>) {
  return {
    workers: await listing("/workers", model),
    loads: await listing("/loads", model),
    rowsWritten: await stub.rowsWritten(),
  };
}

describe("resource caps", () => {
  it("refuses the add and the route past the live request cap with 429 naming it, storing nothing", async () => {
    const { model, stub } = await registered();
    // Filled inside the object, in one call.
    await runInDurableObject(stub, async (object) => {
      const instance = object as unknown as TrackerObject;
      for (let i = 0; i < LIVE_CAP; i++) {
        await instance.add({
          requestId: `r${i}`,
          workerId: 1n,
          dpRank: i % 2,
          hashes: chain(i, 1),
          newIslTokens: 1,
        });
      }
    });
    const before = await footprint(model, stub);
    const message = `live request limit reached: at most ${LIVE_CAP} live requests per tracker`;
    const add = {
      model_name: model,
      request_id: "over",
      worker_id: 1,
      dp_rank: 0,
      sequence_hashes: [7],
      new_isl_tokens: 5,
    };
    for (const answer of [
      await postJson("/add", add),
      await postMsgpack("/add", add),
      await postJson("/route", { model_name: model, request_id: "routed", sequence_hashes: [7] }),
    ]) {
      expect([answer.status, errorOf(answer)]).toEqual([429, message]);
    }
    expect(await footprint(model, stub)).toEqual(before);
    expect((await postJson("/prefill_complete", { model_name: model, request_id: "over" })).status).toBe(404);
    // Room again once a request leaves.
    expect((await postJson("/free", { model_name: model, request_id: "r0" })).status).toBe(200);
    expect((await postJson("/add", add)).status).toBe(201);
  });

  it("refuses prompts past the live block budget with 429 naming it, and admits what still fits", async () => {
    const { model, stub } = await registered(1);
    const held = 4 * MAX_HASHES_PER_CALL;
    await runInDurableObject(stub, async (object) => {
      const instance = object as unknown as TrackerObject;
      for (let i = 0; i < 4; i++) {
        const hashes = chain(i * MAX_HASHES_PER_CALL, MAX_HASHES_PER_CALL);
        await instance.add({ requestId: `big${i}`, workerId: 1n, dpRank: 0, hashes, newIslTokens: 0 });
      }
    });
    const before = await footprint(model, stub);
    const big = chain(10_000_000, MAX_HASHES_PER_CALL);
    const message = `live block budget reached: live requests may hold at most ${BLOCK_CAP} prompt blocks per tracker (${held} held, this request has ${MAX_HASHES_PER_CALL})`;
    const add = {
      model_name: model,
      request_id: "big4",
      worker_id: 1,
      dp_rank: 0,
      sequence_hashes: [...big],
    };
    const refusedAdd = await postMsgpack("/add", add);
    expect([refusedAdd.status, errorOf(refusedAdd)]).toEqual([429, message]);
    const refusedRoute = await postMsgpack("/route", {
      model_name: model,
      request_id: "r",
      sequence_hashes: [...big],
    });
    expect([refusedRoute.status, errorOf(refusedRoute)]).toEqual([429, message]);
    expect(await footprint(model, stub)).toEqual(before);

    const rest = BLOCK_CAP - held;
    expect((await postMsgpack("/add", { ...add, sequence_hashes: [...big.subarray(0, rest)] })).status).toBe(
      201,
    );
    const full = await postJson("/add", { ...add, request_id: "one", sequence_hashes: [1] });
    expect([full.status, errorOf(full)]).toEqual([
      429,
      `live block budget reached: live requests may hold at most ${BLOCK_CAP} prompt blocks per tracker (${BLOCK_CAP} held, this request has 1)`,
    ]);
    // An empty prompt holds no blocks and is still admitted.
    expect((await postJson("/add", { ...add, request_id: "empty", sequence_hashes: [] })).status).toBe(201);
    expect(JSON.parse(await listing("/loads", model))).toMatchObject([{ active_decode_blocks: BLOCK_CAP }]);
  });

  it("refuses more than 65,536 hashes in one call with 413 naming the cap, before calling the tracker", async () => {
    const { model, stub } = await registered();
    const before = await footprint(model, stub);
    const tooMany = numbers(1, MAX_HASHES_PER_CALL + 1);
    const message = `field \`sequence_hashes\`: at most ${MAX_HASHES_PER_CALL} hashes allowed, got ${MAX_HASHES_PER_CALL + 1}`;
    const bodies: [string, object][] = [
      ["/add", { model_name: model, request_id: "r", worker_id: 1, dp_rank: 0, sequence_hashes: tooMany }],
      ["/potential_loads", { model_name: model, sequence_hashes: tooMany }],
      ["/route", { model_name: model, request_id: "r", sequence_hashes: tooMany }],
    ];
    for (const [path, body] of bodies) {
      for (const answer of [await postJson(path, body), await postMsgpack(path, body)]) {
        expect([path, answer.status, errorOf(answer)]).toEqual([path, 413, message]);
      }
    }
    expect(await footprint(model, stub)).toEqual(before);
  });

  it("refuses a worker past the worker cap and a range past the rank cap with 429 naming them", async () => {
    const { model, stub } = await registered(1);
    // Filled inside the object through its tracker, and the directory told once at the end, as the
    // alarm would: each of the object's own `register` calls reports the whole worker list to the
    // directory, which reads its rows back, so thousands of them cost time quadratic in the cap.
    await runInDurableObject(stub, async (object) => {
      const inside = object as unknown as FillSeam;
      const now = Date.now();
      for (let id = 2; id <= MAX_WORKERS; id++) {
        const input = { workerId: BigInt(id), blockSize: 16, dpStart: 0, dpSize: 1 };
        expect(inside.tracker.register(input, now)).toMatchObject({ ok: true });
      }
      await inside.catalogLink.update(inside.tracker);
    });
    const before = await footprint(model, stub);
    expect(JSON.parse(before.workers)).toHaveLength(MAX_WORKERS);
    const extra = { worker_id: MAX_WORKERS + 1, model_name: model, block_size: 16, dp_start: 0, dp_size: 1 };
    const refused = await postJson("/register", extra);
    expect([refused.status, errorOf(refused)]).toEqual([
      429,
      `worker limit reached: at most ${MAX_WORKERS} workers per tracker`,
    ]);
    expect(await footprint(model, stub)).toEqual(before);
    expect((await postJson("/unregister", { worker_id: 2, model_name: model })).status).toBe(200);
    expect((await postJson("/register", extra)).status).toBe(201);

    const wide = uniqueKey("caps");
    const ranks = await postJson("/register", {
      worker_id: 1,
      model_name: wide.model,
      block_size: 16,
      dp_start: 0,
      dp_size: MAX_RANKS + 1,
    });
    expect([ranks.status, errorOf(ranks)]).toEqual([
      429,
      `rank limit reached: at most ${MAX_RANKS} data-parallel ranks per tracker (dp_size=${MAX_RANKS + 1})`,
    ]);
    expect(await listing("/workers", wide.model)).toBe("[]");
  });

  it.runIf(app.routes.some((r) => r.path === "/batch"))(
    "refuses a batch of more than 4,096 ops with 413 naming the cap",
    async () => {
      const { model, stub } = await registered();
      const before = await footprint(model, stub);
      const ops = numbers(0, MAX_BATCH_OPS + 1).map((i) => ({ op: "free", request_id: `r${i}` }));
      for (const answer of [
        await postJson("/batch", { model_name: model, ops }),
        await postMsgpack("/batch", { model_name: model, ops }),
      ]) {
        expect(answer.status).toBe(413);
        expect(errorOf(answer)).toContain(String(MAX_BATCH_OPS));
      }
      expect(await footprint(model, stub)).toEqual(before);
    },
  );

  it("refuses request ids over 512 bytes and names over 256 bytes, counting UTF-8 bytes, naming the limit", async () => {
    const { model, stub } = await registered();
    const before = await footprint(model, stub);
    const add = (fields: object) => ({
      model_name: model,
      request_id: "r",
      worker_id: 1,
      dp_rank: 0,
      sequence_hashes: [1],
      ...fields,
    });
    const cases: [object, string][] = [
      [{ request_id: "r".repeat(513) }, "field `request_id`: expected a string of 1..512 UTF-8 bytes"],
      [{ request_id: "€".repeat(171) }, "field `request_id`: expected a string of 1..512 UTF-8 bytes"],
      [{ model_name: "m".repeat(257) }, "field `model_name`: expected a string of 1..256 UTF-8 bytes"],
      [{ tenant_id: "é".repeat(129) }, "field `tenant_id`: expected a string of 1..256 UTF-8 bytes"],
    ];
    for (const [fields, message] of cases) {
      for (const answer of [await postJson("/add", add(fields)), await postMsgpack("/add", add(fields))]) {
        expect([answer.status, errorOf(answer)]).toEqual([422, message]);
      }
    }
    expect(await footprint(model, stub)).toEqual(before);
    // Exactly at the limits: accepted.
    expect((await postJson("/add", add({ request_id: "€".repeat(170) + "rr" }))).status).toBe(201);
    expect((await postJson("/free", { model_name: model, request_id: "€".repeat(170) + "rr" })).status).toBe(
      200,
    );
  });
});
