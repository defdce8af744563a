import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { u64ToBlob } from "../../durable-objects/storage/u64";
import { trackerStub } from "./helpers";

/** `exports.default` is typed only when GlobalProps names the main module; at runtime it is a Fetcher. */
const worker = (exports as unknown as { default: Fetcher }).default;

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return worker.fetch(
    new Request(`http://x${path}`, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json", ...headers },
    }),
  );
}

async function getJson(path: string, query: Record<string, string>): Promise<unknown> {
  const res = await worker.fetch(new Request(`http://x${path}?${new URLSearchParams(query)}`));
  expect(res.status).toBe(200);
  return res.json();
}

async function expectStatus(
  res: Response | Promise<Response>,
  status: number,
): Promise<Record<string, unknown>> {
  const response = await res;
  const text = await response.text();
  expect({ status: response.status, text }).toMatchObject({ status });
  return JSON.parse(text) as Record<string, unknown>;
}

interface Routed {
  worker_id: number;
  dp_rank: number;
  mode: string;
  cost: {
    logit: number;
    potential_prefill_tokens: number;
    potential_decode_blocks: number;
    overlap_blocks: number;
    cached_blocks: number;
  };
  prefill?: { worker_id: number; dp_rank: number; request_id: string; mode: string };
}

function newModel(): string {
  return `route-${crypto.randomUUID()}`;
}

function register(model: string, workerId: number, extra: Record<string, unknown> = {}): Promise<Response> {
  return post("/register", {
    model_name: model,
    worker_id: workerId,
    block_size: 16,
    dp_start: 0,
    dp_size: 1,
    ...extra,
  });
}

function route(
  model: string,
  requestId: string,
  hashes: number[],
  extra: Record<string, unknown> = {},
  headers = {},
) {
  return post(
    "/route",
    { model_name: model, request_id: requestId, sequence_hashes: hashes, new_isl_tokens: 64, ...extra },
    headers,
  );
}

async function routed(res: Promise<Response>): Promise<Routed> {
  return (await expectStatus(res, 201)) as unknown as Routed;
}

describe("POST /route", () => {
  it("sends a prompt back to the idle worker that served its prefix, once that booking is freed", async () => {
    const model = newModel();
    for (let w = 1; w <= 4; w++) await expectStatus(register(model, w), 201);
    const first = await routed(route(model, "a", [1, 2, 3, 4]));
    await expectStatus(post("/free", { model_name: model, request_id: "a" }), 200);
    for (let i = 0; i < 6; i++) {
      // Every worker is idle; only the cache credit tells the first worker apart.
      const again = await routed(route(model, `b${i}`, [1, 2, 3, 4, 5], { new_isl_tokens: 80 }));
      expect(again.worker_id).toBe(first.worker_id);
      // The first repeat finds the 4 blocks of "a"; later ones all 5, recorded by the repeats.
      expect(again.cost).toMatchObject(
        i === 0
          ? { cached_blocks: 4, potential_prefill_tokens: 16 }
          : { cached_blocks: 5, potential_prefill_tokens: 0 },
      );
      await expectStatus(post("/free", { model_name: model, request_id: `b${i}` }), 200);
    }
  });

  it("spreads 64 concurrent requests over 8 idle workers exactly 8 each: no pile-up", async () => {
    const model = newModel();
    for (let w = 1; w <= 8; w++) await expectStatus(register(model, w), 201);
    const answers = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        routed(route(model, `r${i}`, [i * 4 + 1, i * 4 + 2, i * 4 + 3, i * 4 + 4])),
      ),
    );
    const perWorker = new Map<number, number>();
    for (const a of answers) perWorker.set(a.worker_id, (perWorker.get(a.worker_id) ?? 0) + 1);
    expect([...perWorker.keys()].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect([...perWorker.values()]).toEqual(new Array(8).fill(8));
    // The bookings are real: every worker holds 8 prompts of 4 blocks and 8 × 64 prefill tokens.
    const loads = (await getJson("/loads", { model_name: model, tenant_id: "default" })) as Record<
      string,
      number
    >[];
    expect(loads.map((l) => [l.active_decode_blocks, l.active_prefill_tokens])).toEqual(
      new Array(8).fill([32, 512]),
    );
  });

  it("answers the choice with its cost and mode, and books it as /add does", async () => {
    const model = newModel();
    await expectStatus(register(model, 1), 201);
    const res = await route(model, "a", [1, 2, 3]);
    expect(res.headers.get("x-slot-tracker-warning")).toBeNull();
    expect(await routed(Promise.resolve(res))).toEqual({
      worker_id: 1,
      dp_rank: 0,
      cost: {
        logit: 4 + 3,
        potential_prefill_tokens: 64,
        potential_decode_blocks: 3,
        overlap_blocks: 0,
        cached_blocks: 0,
      },
      mode: "kv",
    });
    // A booked request: /prefill_complete knows it, and a second route under its id is a duplicate.
    await expectStatus(post("/prefill_complete", { model_name: model, request_id: "a" }), 200);
    const duplicate = await expectStatus(route(model, "a", [9]), 409);
    expect(duplicate.error).toBe(
      "Request a already exists (assigned to worker WorkerWithDpRank { worker_id: 1, dp_rank: 0 })",
    );
  });

  it("answers 404 for a tracker without workers, 503 when only prefill workers are registered", async () => {
    const model = newModel();
    expect((await expectStatus(route(model, "a", [1]), 404)).error).toBe(
      `no slot tracker for model=${model} tenant=default`,
    );
    await expectStatus(register(model, 1, { worker_type: "prefill" }), 201);
    const unavailable = await expectStatus(route(model, "a", [1]), 503);
    expect(unavailable.error).toBe(
      `no decode worker registered for model=${model} tenant=default: every registered worker is a prefill worker`,
    );
  });

  it("refuses bad input with a 4xx naming the field", async () => {
    const model = newModel();
    await expectStatus(register(model, 1), 201);
    const override = await expectStatus(
      route(model, "a", [1], { router_config_override: { router_temperature: "hot" } }),
      422,
    );
    expect(override.error).toContain("`router_config_override.router_temperature`");
    const seed = await expectStatus(route(model, "a", [1], {}, { "x-slot-tracker-seed": "abc" }), 400);
    expect(seed.error).toContain("x-slot-tracker-seed");
    const card = await expectStatus(register(model, 2, { router_config: { router_mode: "fastest" } }), 422);
    expect(card.error).toContain("`router_config.router_mode`");
    expect(await getJson("/workers", { model_name: model, tenant_id: "default" })).toHaveLength(1);
  });

  it("draws the same choice for the same seed", async () => {
    const choices = [];
    for (let i = 0; i < 2; i++) {
      const model = newModel();
      for (let w = 1; w <= 6; w++) await expectStatus(register(model, w), 201);
      const seeded = { "x-slot-tracker-seed": "12345" };
      choices.push([
        (await routed(route(model, "a", [1], {}, seeded))).worker_id,
        (await routed(route(model, "b", [2], {}, seeded))).worker_id,
        (await routed(route(model, "c", [3], { router_config_override: { router_temperature: 2 } }, seeded)))
          .worker_id,
      ]);
    }
    expect(choices[1]).toEqual(choices[0]);
  });
});

describe("worker advertisements", () => {
  it("are listed only when given, and survive a restart", async () => {
    const model = newModel();
    await expectStatus(register(model, 1), 201);
    const card = { router_mode: "kv", overlap_score_weight: 0.5, session_affinity_ttl_secs: 60 };
    await expectStatus(register(model, 2, { worker_type: "prefill", router_config: card }), 201);
    await expectStatus(register(model, 3, { worker_type: "decode" }), 201);
    const expected = [
      { worker_id: 1, model_name: model, tenant_id: "default", block_size: 16, dp_start: 0, dp_size: 1 },
      {
        worker_id: 2,
        model_name: model,
        tenant_id: "default",
        block_size: 16,
        dp_start: 0,
        dp_size: 1,
        worker_type: "prefill",
        router_config: card,
      },
      {
        worker_id: 3,
        model_name: model,
        tenant_id: "default",
        block_size: 16,
        dp_start: 0,
        dp_size: 1,
        worker_type: "decode",
      },
    ];
    expect(await getJson("/workers", { model_name: model, tenant_id: "default" })).toEqual(expected);
    await abortAllDurableObjects();
    expect(await getJson("/workers", { model_name: model, tenant_id: "default" })).toEqual(expected);
    // Worker 2 is still a prefill worker after the restart: the prefill hop picks it.
    expect((await routed(route(model, "a", [1]))).prefill?.worker_id).toBe(2);
  });

  it("are readable from a database written before the columns existed", async () => {
    const model = newModel();
    const stub = trackerStub({ model, tenant: "default", replica: "primary" });
    // The schema as released before worker types and cards, with one worker in it.
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec(`
        CREATE TABLE workers (worker_id BLOB PRIMARY KEY, block_size INTEGER NOT NULL,
          dp_start INTEGER NOT NULL, dp_size INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE requests (request_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, worker_id BLOB NOT NULL,
          dp_rank INTEGER NOT NULL, hashes BLOB NOT NULL, new_isl_tokens INTEGER NOT NULL,
          started_at INTEGER NOT NULL, prefill_done INTEGER NOT NULL DEFAULT 0, anchor_at INTEGER,
          expected_output_tokens INTEGER, prefill_duration_ms REAL) WITHOUT ROWID;
        CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;`);
      state.storage.sql.exec(
        "INSERT INTO workers (worker_id, block_size, dp_start, dp_size) VALUES (?, 16, 0, 1)",
        u64ToBlob(7n),
      );
    });
    await abortAllDurableObjects();
    expect(await getJson("/workers", { model_name: model, tenant_id: "default" })).toEqual([
      { worker_id: 7, model_name: model, tenant_id: "default", block_size: 16, dp_start: 0, dp_size: 1 },
    ]);
    await expectStatus(
      register(model, 8, { worker_type: "prefill", router_config: { router_mode: "random" } }),
      201,
    );
    await abortAllDurableObjects();
    const routedAfter = await routed(route(model, "a", [1]));
    expect(routedAfter).toMatchObject({ worker_id: 7, prefill: { worker_id: 8, mode: "random" } });
  });

  it("that disagree are resolved by the first and reported in x-slot-tracker-warning", async () => {
    const model = newModel();
    await expectStatus(register(model, 1, { router_config: { router_mode: "round_robin" } }), 201);
    await expectStatus(register(model, 2, { router_config: { router_mode: "kv" } }), 201);
    const res = await route(model, "a", [1]);
    expect(res.headers.get("x-slot-tracker-warning")).toBe(
      "decode workers advertise conflicting router_config cards: 1 of 2 differ from worker 1's (router_mode=round_robin), which decides",
    );
    expect((await routed(Promise.resolve(res))).mode).toBe("round_robin");
    const stats = await trackerStub({ model, tenant: "default", replica: "primary" }).routingStats();
    expect(stats.decode).toEqual({ mode: "round_robin", cards: 2, disagreeingCards: 1, conflictedRoutes: 1 });
  });
});

describe("disaggregated prefill and decode", () => {
  it("chooses a prefill worker with the prefill set's mode and books it under <id>#prefill", async () => {
    const model = newModel();
    await expectStatus(register(model, 1), 201);
    await expectStatus(register(model, 2), 201);
    const prefillCard = { router_mode: "round_robin" };
    await expectStatus(register(model, 10, { worker_type: "prefill", router_config: prefillCard }), 201);
    await expectStatus(register(model, 11, { worker_type: "prefill", router_config: prefillCard }), 201);
    const first = await routed(route(model, "a", [1, 2]));
    const second = await routed(route(model, "b", [3, 4]));
    expect([first.worker_id, second.worker_id].sort()).toEqual([1, 2]);
    expect(first).toMatchObject({ mode: "kv", prefill: { request_id: "a#prefill", mode: "round_robin" } });
    expect([first.prefill?.worker_id, second.prefill?.worker_id]).toEqual([10, 11]);
    // Both bookings hold load: decode on 1 and 2, prefill on 10 and 11.
    const loads = (await getJson("/loads", { model_name: model, tenant_id: "default" })) as Record<
      string,
      number
    >[];
    expect(loads.map((l) => [l.worker_id, l.active_prefill_tokens])).toEqual([
      [1, 64],
      [2, 64],
      [10, 64],
      [11, 64],
    ]);
    // The prefill booking ends like any request: freed by its id once the prefill worker is done.
    await expectStatus(post("/free", { model_name: model, request_id: "a#prefill" }), 200);
    const after = (await getJson("/loads", { model_name: model, tenant_id: "default" })) as Record<
      string,
      number
    >[];
    expect(after.find((l) => l.worker_id === first.prefill?.worker_id)?.active_prefill_tokens).toBe(0);
  });
});

describe("session affinity", () => {
  it("keeps a session on its worker across calls and restarts, and falls back when the worker leaves", async () => {
    const model = newModel();
    const card = { router_mode: "kv", session_affinity_ttl_secs: 60 };
    for (const w of [1, 2, 3]) await expectStatus(register(model, w, { router_config: card }), 201);
    const home = (await routed(route(model, "s0", [1], { session_id: "chat-1" }))).worker_id;
    for (let i = 1; i <= 3; i++) {
      expect((await routed(route(model, `s${i}`, [i + 1], { session_id: "chat-1" }))).worker_id).toBe(home);
    }
    await abortAllDurableObjects();
    expect((await routed(route(model, "s4", [9], { session_id: "chat-1" }))).worker_id).toBe(home);
    await expectStatus(post("/unregister", { model_name: model, worker_id: home }), 200);
    const moved = (await routed(route(model, "s5", [10], { session_id: "chat-1" }))).worker_id;
    expect(moved).not.toBe(home);
    expect((await routed(route(model, "s6", [11], { session_id: "chat-1" }))).worker_id).toBe(moved);
  });
});
