import { describe, expect, it } from "vitest";
import { seededRng } from "../../durable-objects/core/routing/rng";
import { RoutingState, routeRequest, routingStatsOf } from "../../durable-objects/core/routing/route-request";
import type { RegisterInput, RouteInput, RouterCard, WorkerType } from "../../durable-objects/types";
import { h, RecordingStore, T0, tracker } from "./tracker-fixtures";

function reg(
  workerId: number,
  workerType?: WorkerType,
  routerConfig?: RouterCard,
  dpSize = 1,
): RegisterInput {
  return {
    workerId: BigInt(workerId),
    blockSize: 16,
    dpStart: 0,
    dpSize,
    ...(workerType && { workerType }),
    ...(routerConfig && { routerConfig }),
  };
}

function input(requestId: string, hashes: BigUint64Array, newIslTokens = 32): RouteInput {
  return { requestId, hashes, newIslTokens };
}

describe("routing and booking in one step", () => {
  it("books the choice exactly as /add would, so the store sees an add", () => {
    const store = new RecordingStore();
    const t = tracker({ store });
    t.register(reg(1), T0);
    const routed = routeRequest(t, new RoutingState(), input("r", h(1, 2)), T0, seededRng(0));
    expect(routed).toMatchObject({
      ok: true,
      decode: { workerId: 1n, dpRank: 0, requestId: "r", mode: "kv" },
    });
    expect(store.requests.get("r")?.input).toMatchObject({
      requestId: "r",
      workerId: 1n,
      dpRank: 0,
      newIslTokens: 32,
    });
    expect(t.listLoads(T0)).toEqual([
      { workerId: 1n, dpRank: 0, activePrefillTokens: 32, activeDecodeBlocks: 2 },
    ]);
  });

  it("spreads 64 requests of equal-length distinct prompts over 8 idle workers exactly 8 each", () => {
    const t = tracker();
    for (let w = 1; w <= 8; w++) t.register(reg(w), T0);
    const state = new RoutingState();
    const rng = seededRng(11);
    const perWorker = new Map<bigint, number>();
    for (let i = 0; i < 64; i++) {
      const routed = routeRequest(t, state, input(`r${i}`, h(i * 10 + 1, i * 10 + 2, i * 10 + 3)), T0, rng);
      if (!routed.ok) throw new Error(routed.message);
      perWorker.set(routed.decode.workerId, (perWorker.get(routed.decode.workerId) ?? 0) + 1);
    }
    expect([...perWorker.values()]).toEqual(new Array(8).fill(8));
  });

  it("reports the chosen rank's cost, prefix overlap included", () => {
    const t = tracker();
    t.register(reg(1), T0);
    t.add({ requestId: "warm", workerId: 1n, dpRank: 0, hashes: h(1, 2, 3), newIslTokens: 16 }, T0);
    const routed = routeRequest(t, new RoutingState(), input("r", h(1, 2, 9, 10), 48), T0, seededRng(0));
    // 3 active blocks + 4 − 2 overlapping; prefill 16 + 48 tokens less the 2 cached blocks' 32 =
    // 2 blocks of 16.
    expect(routed.ok && routed.decode.cost).toEqual({
      logit: 2 + 5,
      potentialPrefillTokens: 32,
      potentialDecodeBlocks: 5,
      overlapBlocks: 2,
      cachedBlocks: 2,
    });
  });

  it("prefers, among equally busy workers, the one that already holds the prompt's prefix", () => {
    const t = tracker();
    for (const w of [1, 2, 3]) t.register(reg(w), T0);
    t.add({ requestId: "a", workerId: 1n, dpRank: 0, hashes: h(11, 12, 13, 14), newIslTokens: 0 }, T0);
    t.add({ requestId: "b", workerId: 2n, dpRank: 0, hashes: h(1, 2, 3, 4), newIslTokens: 0 }, T0);
    t.add({ requestId: "c", workerId: 3n, dpRank: 0, hashes: h(31, 32, 33, 34), newIslTokens: 0 }, T0);
    // Worker 2: 4 held + 5 − 4 shared = 5 blocks; the others 4 + 5 = 9.
    const routed = routeRequest(t, new RoutingState(), input("r", h(1, 2, 3, 4, 5), 0), T0, seededRng(0));
    expect(routed).toMatchObject({
      ok: true,
      decode: { workerId: 2n, cost: { logit: 5, potentialDecodeBlocks: 5, overlapBlocks: 4 } },
    });
  });

  it("applies router_config_override over the resolved tuning", () => {
    const t = tracker();
    for (const w of [1, 2]) t.register(reg(w), T0);
    // Worker 1 holds many prefill tokens but few blocks; worker 2 the reverse.
    t.add({ requestId: "p", workerId: 1n, dpRank: 0, hashes: h(100), newIslTokens: 160 }, T0);
    t.add(
      { requestId: "d", workerId: 2n, dpRank: 0, hashes: h(200, 201, 202, 203, 204), newIslTokens: 0 },
      T0,
    );
    const state = new RoutingState();
    // Default weight 1: worker 1 = 10 + 1 + 1, worker 2 = 0 + 5 + 1 → worker 2.
    const byDefault = routeRequest(t, state, input("a", h(7), 0), T0, seededRng(0));
    expect(byDefault.ok && byDefault.decode.workerId).toBe(2n);
    t.free("a", T0);
    // Weight 0 ignores prefill: worker 1 = 2 blocks, worker 2 = 6 → worker 1.
    const weightless = routeRequest(
      t,
      state,
      { ...input("b", h(7), 0), overlapScoreWeight: 0 },
      T0,
      seededRng(0),
    );
    expect(weightless.ok && weightless.decode.workerId).toBe(1n);
  });
});

describe("refusals", () => {
  it("answers tracker_not_found for a tracker without workers", () => {
    const routed = routeRequest(tracker(), new RoutingState(), input("r", h(1)), T0, seededRng(0));
    expect(routed).toEqual({
      ok: false,
      code: "tracker_not_found",
      message: "no slot tracker for model=model tenant=default",
    });
  });

  it("answers no_worker when every worker is a prefill worker", () => {
    const t = tracker();
    t.register(reg(1, "prefill"), T0);
    const routed = routeRequest(t, new RoutingState(), input("r", h(1)), T0, seededRng(0));
    expect(routed).toMatchObject({ ok: false, code: "no_worker" });
    expect(t.liveRequests).toBe(0);
  });

  it("refuses a live request id, and a prefill booking id already taken, booking nothing", () => {
    const t = tracker();
    t.register(reg(1), T0);
    t.register(reg(2, "prefill"), T0);
    t.add({ requestId: "r", workerId: 1n, dpRank: 0, hashes: h(1), newIslTokens: 0 }, T0);
    t.add({ requestId: "s#prefill", workerId: 2n, dpRank: 0, hashes: h(1), newIslTokens: 0 }, T0);
    const state = new RoutingState();
    expect(routeRequest(t, state, input("r", h(5)), T0, seededRng(0))).toEqual({
      ok: false,
      code: "duplicate_request",
      message: "Request r already exists (assigned to worker WorkerWithDpRank { worker_id: 1, dp_rank: 0 })",
    });
    expect(routeRequest(t, state, input("s", h(5)), T0, seededRng(0))).toMatchObject({
      ok: false,
      code: "duplicate_request",
      message: expect.stringContaining("Request s#prefill already exists"),
    });
    expect(t.liveRequests).toBe(2);
  });

  it("undoes the decode booking when the prefill booking hits the live request cap", () => {
    const t = tracker({ limits: { maxLiveRequests: 1 } });
    t.register(reg(1), T0);
    t.register(reg(2, "prefill"), T0);
    const routed = routeRequest(t, new RoutingState(), input("r", h(5)), T0, seededRng(0));
    expect(routed).toMatchObject({ ok: false, code: "limit_exceeded" });
    expect(t.liveRequests).toBe(0);
  });
});

describe("disaggregated prefill and decode", () => {
  it("chooses a prefill worker too, books it under <id>#prefill, and never decodes on a prefill worker", () => {
    const t = tracker();
    t.register(reg(1, "decode"), T0);
    t.register(reg(2), T0);
    t.register(reg(10, "prefill"), T0);
    t.register(reg(11, "prefill"), T0);
    const state = new RoutingState();
    const prefillSeen = new Set<bigint>();
    for (let i = 0; i < 6; i++) {
      const routed = routeRequest(t, state, input(`r${i}`, h(i * 10 + 1, i * 10 + 2), 64), T0, seededRng(i));
      if (!routed.ok) throw new Error(routed.message);
      expect([1n, 2n]).toContain(routed.decode.workerId);
      expect(routed.prefill).toMatchObject({ requestId: `r${i}#prefill`, mode: "kv" });
      prefillSeen.add(routed.prefill!.workerId);
    }
    // Booked prefill load spreads the prefill hop like the decode hop.
    expect([...prefillSeen].sort()).toEqual([10n, 11n]);
    expect(t.request("r0#prefill")?.slot.workerId).toBeGreaterThanOrEqual(10n);
  });

  it("leaves decode blocks out of the prefill hop's cost", () => {
    const t = tracker();
    t.register(reg(1), T0);
    t.register(reg(10, "prefill"), T0);
    t.register(reg(11, "prefill"), T0);
    // Prefill worker 10 holds many blocks but no prefill tokens; worker 11 a few prefill tokens.
    t.add(
      { requestId: "blocks", workerId: 10n, dpRank: 0, hashes: h(1, 2, 3, 4, 5, 6, 7, 8), newIslTokens: 0 },
      T0,
    );
    t.add({ requestId: "tokens", workerId: 11n, dpRank: 0, hashes: h(90), newIslTokens: 16 }, T0);
    const routed = routeRequest(t, new RoutingState(), input("r", h(50), 16), T0, seededRng(0));
    if (!routed.ok) throw new Error(routed.message);
    expect(routed.prefill).toMatchObject({ workerId: 10n, cost: { logit: 1, potentialDecodeBlocks: 9 } });
  });

  it("routes each hop by its own set's card: KV prefill in front of round-robin decode", () => {
    const t = tracker();
    t.register(reg(1, "decode", { routerMode: "round_robin" }), T0);
    t.register(reg(2, "decode"), T0);
    t.register(reg(10, "prefill", { routerMode: "kv" }), T0);
    const state = new RoutingState();
    const decodes: bigint[] = [];
    for (let i = 0; i < 4; i++) {
      // Same prompt each time: KV would keep it on one worker; round robin alternates regardless.
      const routed = routeRequest(t, state, input(`r${i}`, h(1, 2, 3)), T0, seededRng(0));
      if (!routed.ok) throw new Error(routed.message);
      expect(routed.decode.mode).toBe("round_robin");
      expect(routed.prefill?.mode).toBe("kv");
      decodes.push(routed.decode.workerId);
    }
    expect(decodes).toEqual([1n, 2n, 1n, 2n]);
  });
});

describe("conflicting advertisements", () => {
  it("are resolved by the first card, reported in warnings and counted", () => {
    const t = tracker();
    t.register(reg(5, "decode", { routerMode: "random" }), T0);
    t.register(reg(3, "decode", { routerMode: "kv" }), T0);
    t.register(reg(10, "prefill", { routerMode: "kv" }), T0);
    const state = new RoutingState();
    const routed = routeRequest(t, state, input("r", h(1)), T0, seededRng(0));
    if (!routed.ok) throw new Error(routed.message);
    expect(routed.decode.mode).toBe("random");
    expect(routed.warnings).toEqual([
      "decode workers advertise conflicting router_config cards: 1 of 2 differ from worker 5's (router_mode=random), which decides",
    ]);
    routeRequest(t, state, input("s", h(2)), T0, seededRng(0));
    expect(routingStatsOf(t, state, T0)).toEqual({
      decode: { mode: "random", cards: 2, disagreeingCards: 1, conflictedRoutes: 2 },
      prefill: { mode: "kv", cards: 1, disagreeingCards: 0, conflictedRoutes: 0 },
      sessionBindings: 0,
    });
  });
});
