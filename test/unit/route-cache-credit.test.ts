import { describe, expect, it } from "vitest";
import { seededRng } from "../../durable-objects/core/routing/rng";
import { RoutingState, routeRequest } from "../../durable-objects/core/routing/route-request";
import type { Tracker } from "../../durable-objects/core/tracker";
import { DEFAULT_ROUTER_TTL_SECS } from "../../durable-objects/limits";
import type { RouteInput } from "../../durable-objects/types";
import { h, req, T0, tracker, worker } from "./tracker-fixtures";

const BS = 16;

function route(t: Tracker, requestId: string, hashes: BigUint64Array, isl: number, now = T0, seed = 0) {
  const input: RouteInput = { requestId, hashes, newIslTokens: isl };
  const routed = routeRequest(t, new RoutingState(), input, now, seededRng(seed));
  if (!routed.ok) throw new Error(routed.message);
  return routed.decode;
}

/** Two idle workers; worker 1 served the prompt h(1..4) earlier, and that booking was freed. */
function warmedThenFreed(): Tracker {
  const t = tracker();
  t.register(worker(1, 0, 1, BS), T0);
  t.register(worker(2, 0, 1, BS), T0);
  t.add(req("warm", 1, 0, h(1, 2, 3, 4), 64), T0);
  t.free("warm", T0);
  return t;
}

describe("/route's KV cost credits what the cache index holds", () => {
  it("sends a prompt to the idle rank that cached its prefix from a freed booking, every draw", () => {
    for (let seed = 0; seed < 16; seed++) {
      const t = warmedThenFreed();
      // Worker 1: 80 − 64 cached = 16 tokens = 1 block + 5 decode blocks = 6; worker 2: 5 + 5 = 10.
      // Without the credit both cost 10 and the tie would go either way.
      const choice = route(t, "r", h(1, 2, 3, 4, 5), 80, T0 + 1, seed);
      expect(choice.workerId).toBe(1n);
      expect(choice.cost).toEqual({
        logit: 6,
        potentialPrefillTokens: 16,
        potentialDecodeBlocks: 5,
        overlapBlocks: 0,
        cachedBlocks: 4,
      });
    }
  });

  it("credits at most the prompt's tokens", () => {
    const t = warmedThenFreed();
    const choice = route(t, "r", h(1, 2, 3, 4), 40, T0 + 1);
    expect(choice.cost).toMatchObject({ potentialPrefillTokens: 0, cachedBlocks: 4 });
    expect(choice.workerId).toBe(1n);
  });

  it("credits nothing once the TTL has passed", () => {
    const t = warmedThenFreed();
    const choice = route(t, "r", h(1, 2, 3, 4, 5), 80, T0 + DEFAULT_ROUTER_TTL_SECS * 1000, 3);
    expect(choice.cost).toMatchObject({ potentialPrefillTokens: 80, cachedBlocks: 0, logit: 10 });
  });

  it("credits a selection booking's public chain, not its keyed tracking hashes", () => {
    const t = tracker();
    t.register(worker(1, 0, 1, BS), T0);
    t.register(worker(2, 0, 1, BS), T0);
    const publicChain = h(1, 2, 3, 4);
    t.add(
      {
        ...req("selected", 2, 0, h(91, 92, 93, 94), 64),
        cachePrompt: { blockHashes: h(1, 20, 30, 40), sequenceHashes: publicChain },
      },
      T0,
    );
    t.free("selected", T0);
    expect(route(t, "a", h(1, 2, 3, 4, 5), 80, T0 + 1).workerId).toBe(2n);
    expect(route(t, "b", h(91, 92, 93, 94, 95), 80, T0 + 1).cost.cachedBlocks).toBe(0);
  });

  it("leaves /potential_loads as Dynamo's slot tracker answers it: no credit", () => {
    const t = warmedThenFreed();
    const potential = t.potentialLoads(h(1, 2, 3, 4, 5), 80, T0 + 1);
    expect(potential.ok && potential.loads.map((l) => l.potentialPrefillTokens)).toEqual([80, 80]);
  });
});
