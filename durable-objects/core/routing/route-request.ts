/**
 * `core/routing/`: how `/route` chooses ranks. This file books the choice; `selection.ts` is
 * Dynamo's worker selector, `advertisement.ts` resolves how a worker set wants to be routed,
 * `session-affinity.ts` keeps a session on its rank and `rng.ts` is the injected randomness.
 *
 * `POST /route` on the pure core: choose a decode rank (and a prefill rank when the tracker has
 * prefill workers) and book the choice through `Tracker.add`, in one synchronous step, so no other
 * call can read the same loads in between. Booking through `add` means the store sees a route
 * exactly as it sees an `/add`: persisted and replicated the same way.
 *
 * The KV cost credits what each rank has cached as Dynamo's selector does (reference selection §4.2,
 * §6): `potential_prefill_tokens = active + isl − min(cached, isl)`, where `cached` is the tracker's
 * cache index's device blocks for the prompt × block size, the index queried by sequence hashes alone
 * (so it counts what earlier `/route`, `/add` and selection bookings of the same chain recorded on the
 * rank within `DYN_ROUTER_TTL_SECS`, freed or not). `/potential_loads` stays without the credit, as
 * Dynamo's slot tracker has none.
 */
import type {
  HopStats,
  RegisterInput,
  Result,
  RouteChoice,
  RouteInput,
  RouteOutcome,
  RoutingStats,
  WorkerType,
} from "../../types";
import { fail, text } from "../messages";
import type { Tracker } from "../tracker";
import {
  type Advertisement,
  conflictWarning,
  type RoutingPolicy,
  resolveAdvertisement,
  TRACKER_DEFAULTS,
} from "./advertisement";
import type { Rng } from "./rng";
import { chooseIndex, kvLogit } from "./selection";
import { type Hop, SessionAffinity } from "./session-affinity";

/** The prefill booking is a live request of its own, under `<request_id>` + this suffix. */
export const PREFILL_BOOKING_SUFFIX = "#prefill";

/** A hop's routing state kept by the object between calls (memory only, see `RoutingState`). */
interface HopCounters {
  /** Round-robin position. */
  turn: number;
  /** Routes that resolved this set while its cards disagreed. */
  conflictedRoutes: number;
}

/**
 * What `/route` keeps between calls. Round-robin positions and conflict counts live in memory only
 * (a restart starts the rotation over); session bindings are durable through the affinity's store.
 */
export class RoutingState {
  readonly hops: Record<Hop, HopCounters> = {
    decode: { turn: 0, conflictedRoutes: 0 },
    prefill: { turn: 0, conflictedRoutes: 0 },
  };

  constructor(readonly affinity: SessionAffinity = new SessionAffinity()) {}
}

interface Candidate {
  workerId: bigint;
  dpRank: number;
  potentialPrefillTokens: number;
  potentialDecodeBlocks: number;
  overlapBlocks: number;
  cachedBlocks: number;
}

interface HopPlan {
  hop: Hop;
  ad: Advertisement;
  policy: RoutingPolicy;
  candidates: Candidate[];
}

export function routeRequest(
  tracker: Tracker,
  state: RoutingState,
  input: RouteInput,
  now: number,
  rng: Rng,
): Result<RouteOutcome> {
  const potential = tracker.potentialLoads(input.hashes, input.newIslTokens, now);
  if (!potential.ok) return potential;
  const active = tracker.listLoads(now);
  const cached = cachedBlocksOf(tracker, input.hashes, potential.loads, now);
  const blockSize = tracker.blockSize ?? 1;
  const registrations = tracker.registrations();
  const typeOf = new Map<bigint, WorkerType>(
    registrations.map((r) => [r.workerId, r.workerType ?? "decode"]),
  );
  const sets: Record<Hop, Candidate[]> = { decode: [], prefill: [] };
  // Both listings come from the same sorted rank table at the same `now`, so they align index by index.
  potential.loads.forEach((load, i) => {
    const activeBlocks = active[i]?.activeDecodeBlocks ?? 0;
    const cachedBlocks = cached[i]!;
    sets[typeOf.get(load.workerId) ?? "decode"].push({
      workerId: load.workerId,
      dpRank: load.dpRank,
      potentialPrefillTokens:
        load.potentialPrefillTokens - Math.min(cachedBlocks * blockSize, input.newIslTokens),
      potentialDecodeBlocks: load.potentialDecodeBlocks,
      overlapBlocks: input.hashes.length + activeBlocks - load.potentialDecodeBlocks,
      cachedBlocks,
    });
  });
  if (sets.decode.length === 0) return fail("no_worker", text.noDecodeWorker(tracker.model, tracker.tenant));

  const plans = [planOf("decode", registrations, sets.decode, input)];
  const ids = [input.requestId];
  if (sets.prefill.length > 0) {
    plans.push(planOf("prefill", registrations, sets.prefill, input));
    ids.push(input.requestId + PREFILL_BOOKING_SUFFIX);
  }
  // Refused before anything is chosen, so a refused route leaves even the round-robin turn as it was.
  for (const id of ids) {
    const clash = tracker.request(id);
    if (clash)
      return fail("duplicate_request", text.duplicateRequest(id, clash.slot.workerId, clash.slot.dpRank));
  }

  if (input.owner !== undefined) {
    const refused = tracker.ownerRefusal(input.owner, now);
    if (refused) return refused;
  }

  const choices = plans.map((plan) => choose(plan, state, input, blockSize, now, rng));
  const booked: string[] = [];
  for (const [i, choice] of choices.entries()) {
    const requestId = ids[i]!;
    const added = tracker.add(
      {
        requestId,
        workerId: choice.candidate.workerId,
        dpRank: choice.candidate.dpRank,
        hashes: input.hashes,
        newIslTokens: input.newIslTokens,
        ...(input.expectedOutputTokens !== undefined && { expectedOutputTokens: input.expectedOutputTokens }),
        ...(input.owner !== undefined && { owner: input.owner }),
      },
      now,
    );
    if (!added.ok) {
      // Only a cap can refuse the second booking; undo the first so the route changes nothing.
      for (const id of booked) tracker.free(id, now);
      return added;
    }
    booked.push(requestId);
  }

  const warnings: string[] = [];
  const outcome = plans.map((plan, i) => {
    const { candidate, logit } = choices[i]!;
    const counters = state.hops[plan.hop];
    if (plan.ad.disagreeing > 0) {
      counters.conflictedRoutes++;
      warnings.push(conflictWarning(plan.hop, plan.ad));
    }
    const ttlSecs = plan.policy.sessionAffinityTtlSecs;
    if (input.sessionId !== undefined && ttlSecs !== undefined) {
      state.affinity.bind(
        input.sessionId,
        plan.hop,
        candidate.workerId,
        candidate.dpRank,
        ttlSecs * 1000,
        now,
      );
    }
    const choice: RouteChoice = {
      workerId: candidate.workerId,
      dpRank: candidate.dpRank,
      requestId: booked[i]!,
      mode: plan.policy.mode,
      cost: {
        logit,
        potentialPrefillTokens: candidate.potentialPrefillTokens,
        potentialDecodeBlocks: candidate.potentialDecodeBlocks,
        overlapBlocks: candidate.overlapBlocks,
        cachedBlocks: candidate.cachedBlocks,
      },
    };
    return choice;
  });
  return { ok: true, decode: outcome[0]!, ...(outcome[1] && { prefill: outcome[1] }), warnings };
}

/**
 * The leading prompt blocks the cache index holds on each rank of `loads` (in their order, which
 * is the index's: worker id, then rank), 0 for a rank it does not report.
 */
function cachedBlocksOf(
  tracker: Tracker,
  hashes: BigUint64Array,
  loads: readonly { workerId: bigint; dpRank: number }[],
  now: number,
): number[] {
  const rows = tracker.cache.overlap({ localHashes: hashes, sequenceHashes: hashes }, now);
  const blocks = new Array<number>(loads.length).fill(0);
  let r = 0;
  for (const [i, load] of loads.entries()) {
    while (r < rows.length && isBefore(rows[r]!, load)) r++;
    const row = rows[r];
    if (row && row.workerId === load.workerId && row.dpRank === load.dpRank) blocks[i] = row.deviceBlocks;
  }
  return blocks;
}

function isBefore(a: { workerId: bigint; dpRank: number }, b: { workerId: bigint; dpRank: number }): boolean {
  return a.workerId < b.workerId || (a.workerId === b.workerId && a.dpRank < b.dpRank);
}

/** How each worker set is routed now, with its conflict count: the figures behind metrics. */
export function routingStatsOf(tracker: Tracker, state: RoutingState, now: number): RoutingStats {
  tracker.expire(now);
  const registrations = tracker.registrations();
  const stats = (hop: Hop): HopStats => {
    const ad = advertisementOf(registrations, hop);
    return {
      mode: ad.policy.mode,
      cards: ad.cards,
      disagreeingCards: ad.disagreeing,
      conflictedRoutes: state.hops[hop].conflictedRoutes,
    };
  };
  return { decode: stats("decode"), prefill: stats("prefill"), sessionBindings: state.affinity.size };
}

/** The resolution over one set's workers, in registration order. */
function advertisementOf(registrations: readonly RegisterInput[], hop: Hop): Advertisement {
  return resolveAdvertisement(
    registrations.filter((r) => (r.workerType ?? "decode") === hop),
    TRACKER_DEFAULTS,
  );
}

/** The set's resolved routing with the request's `router_config_override` on top. */
function planOf(
  hop: Hop,
  registrations: RegisterInput[],
  candidates: Candidate[],
  input: RouteInput,
): HopPlan {
  const ad = advertisementOf(registrations, hop);
  const policy: RoutingPolicy = {
    ...ad.policy,
    overlapScoreWeight: input.overlapScoreWeight ?? ad.policy.overlapScoreWeight,
    routerTemperature: input.routerTemperature ?? ad.policy.routerTemperature,
  };
  return { hop, ad, policy, candidates };
}

function choose(
  plan: HopPlan,
  state: RoutingState,
  input: RouteInput,
  blockSize: number,
  now: number,
  rng: Rng,
): { candidate: Candidate; logit: number } {
  const { hop, policy, candidates } = plan;
  const costOptions = {
    overlapScoreWeight: policy.overlapScoreWeight,
    blockSize,
    countDecodeBlocks: hop === "decode",
  };
  const logits = candidates.map((c) => kvLogit(c, costOptions));
  let index = -1;
  if (input.sessionId !== undefined && policy.sessionAffinityTtlSecs !== undefined) {
    const bound = state.affinity.lookup(input.sessionId, hop, now);
    // A rank that left the set (its worker unregistered) no longer holds the session.
    if (bound)
      index = candidates.findIndex((c) => c.workerId === bound.workerId && c.dpRank === bound.dpRank);
  }
  if (index < 0) {
    index = chooseIndex(policy.mode, logits, policy.routerTemperature, rng, state.hops[hop].turn);
    if (policy.mode === "round_robin") state.hops[hop].turn++;
  }
  return { candidate: candidates[index]!, logit: logits[index]! };
}
