import { describe, expect, it } from "vitest";
import {
  type Advertiser,
  conflictWarning,
  type RoutingPolicy,
  resolveAdvertisement,
  TRACKER_DEFAULTS,
} from "../../durable-objects/core/routing/advertisement";
import type { RegisterInput, RouterCard } from "../../durable-objects/types";
import app from "../../src/app";
import type { Env } from "../../src/env";

function worker(workerId: number, routerConfig?: RouterCard): Advertiser {
  return routerConfig === undefined
    ? { workerId: BigInt(workerId) }
    : { workerId: BigInt(workerId), routerConfig };
}

const ROUND_ROBIN_DEFAULTS: RoutingPolicy = { ...TRACKER_DEFAULTS, mode: "round_robin" };

describe("resolving a worker set's advertisement", () => {
  it("inherits the tracker defaults when no card advertises anything", () => {
    // The seed's `inherits_decode_mode_when_card_advertises_nothing`: a silent set is routed as before.
    const resolved = resolveAdvertisement([worker(1), worker(2)], ROUND_ROBIN_DEFAULTS);
    expect(resolved.policy).toEqual(ROUND_ROBIN_DEFAULTS);
    expect(resolved).toMatchObject({ decidedBy: undefined, cards: 0, disagreeing: 0 });
  });

  it("lets the first card in registration order decide the mode", () => {
    const resolved = resolveAdvertisement(
      [worker(9), worker(4, { routerMode: "random" }), worker(2, { routerMode: "random" })],
      TRACKER_DEFAULTS,
    );
    expect(resolved.policy.mode).toBe("random");
    expect(resolved.decidedBy).toBe(4n);
  });

  it("counts the cards that disagree with the first instead of merging them", () => {
    const resolved = resolveAdvertisement(
      [
        worker(1, { routerMode: "kv", overlapScoreWeight: 2 }),
        worker(2, { routerMode: "kv", overlapScoreWeight: 2 }),
        worker(3, { routerMode: "round_robin" }),
        worker(4, { routerMode: "kv", overlapScoreWeight: 3 }),
        worker(5),
      ],
      TRACKER_DEFAULTS,
    );
    expect(resolved.policy).toEqual({
      mode: "kv",
      overlapScoreWeight: 2,
      routerTemperature: 0,
      sessionAffinityTtlSecs: undefined,
    });
    expect(resolved).toMatchObject({ cards: 4, disagreeing: 2, decidedBy: 1n });
    expect(conflictWarning("decode", resolved)).toBe(
      "decode workers advertise conflicting router_config cards: 2 of 4 differ from worker 1's (router_mode=kv), which decides",
    );
  });

  it("does not count KV tuning against a card whose mode ignores it", () => {
    const resolved = resolveAdvertisement(
      [worker(1, { routerMode: "random" }), worker(2, { routerMode: "random", overlapScoreWeight: 7 })],
      TRACKER_DEFAULTS,
    );
    expect(resolved.disagreeing).toBe(0);
  });

  it("replaces the defaults as a whole: unset tuning is Dynamo's default, not the tracker's", () => {
    const defaults: RoutingPolicy = {
      mode: "kv",
      overlapScoreWeight: 5,
      routerTemperature: 0.7,
      sessionAffinityTtlSecs: 60,
    };
    const resolved = resolveAdvertisement([worker(1, { routerMode: "kv" })], defaults);
    expect(resolved.policy).toEqual({
      mode: "kv",
      overlapScoreWeight: 1,
      routerTemperature: 0,
      sessionAffinityTtlSecs: undefined,
    });
  });

  it("takes the session affinity TTL whole or not at all", () => {
    // The seed's `session_affinity_ttl_is_taken_whole_or_not_at_all`: a card without a TTL means
    // no affinity, not the defaults' TTL; a set advertising nothing inherits the defaults' TTL.
    const defaults: RoutingPolicy = { ...TRACKER_DEFAULTS, sessionAffinityTtlSecs: 60 };
    const advertised = resolveAdvertisement([worker(1, { routerMode: "kv" })], defaults);
    expect(advertised.policy.sessionAffinityTtlSecs).toBeUndefined();
    const silent = resolveAdvertisement([worker(1)], defaults);
    expect(silent.policy.sessionAffinityTtlSecs).toBe(60);
    const withTtl = resolveAdvertisement(
      [worker(1, { routerMode: "kv", sessionAffinityTtlSecs: 30 })],
      defaults,
    );
    expect(withTtl.policy.sessionAffinityTtlSecs).toBe(30);
  });
});

/** The app with a tracker namespace that records registrations and accepts them. */
function appWithTracker() {
  const registered: RegisterInput[] = [];
  const stub = {
    register: async (input: RegisterInput) => {
      registered.push(input);
      return { ok: true, created: true };
    },
  };
  const env = {
    TRACKER: { getByName: () => stub },
    DIRECTORY: { getByName: () => ({}) },
    REPLICAS: "primary",
    REQUEST_EXPIRY_SECONDS: "300",
  } as unknown as Env;
  const register = (extra: Record<string, unknown>) =>
    app.request(
      "/register",
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          worker_id: 1,
          model_name: "m",
          block_size: 16,
          dp_start: 0,
          dp_size: 1,
          ...extra,
        }),
      },
      env,
    );
  return { register, registered };
}

describe("a card at /register", () => {
  it.each([
    [{ router_mode: "least_loaded" }, "router_config.router_mode"],
    [{ router_mode: 1 }, "router_config.router_mode"],
    [{}, "router_config.router_mode"],
    [{ router_mode: "kv", overlap_score_weight: "high" }, "router_config.overlap_score_weight"],
    [{ router_mode: "kv", router_temperature: -1 }, "router_config.router_temperature"],
    [{ router_mode: "kv", session_affinity_ttl_secs: 1.5 }, "router_config.session_affinity_ttl_secs"],
    ["kv", "router_config"],
  ])(
    "that cannot be read (%j) is refused with a 4xx naming %s, and nothing is registered",
    async (card, field) => {
      const { register, registered } = appWithTracker();
      const res = await register({ router_config: card });
      expect(res.status).toBe(422);
      const { error } = (await res.json()) as { error: string };
      expect(error).toContain(`\`${field}\``);
      expect(registered).toEqual([]);
    },
  );

  it("refuses an unknown worker_type, naming the field", async () => {
    const { register, registered } = appWithTracker();
    const res = await register({ worker_type: "encode" });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { error: string }).error).toContain("`worker_type`");
    expect(registered).toEqual([]);
  });

  it("is passed on with the worker type, and absent when not given", async () => {
    const { register, registered } = appWithTracker();
    expect(
      (
        await register({
          worker_type: "prefill",
          router_config: { router_mode: "round_robin", session_affinity_ttl_secs: 30, unknown_knob: true },
        })
      ).status,
    ).toBe(201);
    expect((await register({})).status).toBe(201);
    expect(registered[0]).toMatchObject({
      workerType: "prefill",
      routerConfig: { routerMode: "round_robin", sessionAffinityTtlSecs: 30 },
    });
    expect(Object.keys(registered[1]!).sort()).toEqual(["blockSize", "dpSize", "dpStart", "workerId"]);
  });
});
