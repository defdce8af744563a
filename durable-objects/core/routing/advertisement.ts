/**
 * How a worker set (decode or prefill) wants to be routed, resolved from the `router_config` cards
 * its workers registered with. Mirrors the seed's `resolve_advertisement_from_cards` (003): the first
 * card decides, and it is taken whole; disagreeing cards are counted, never merged; a set that
 * advertises nothing inherits the tracker's defaults.
 */
import type { RouterCard, RouterMode, WorkerType } from "../../types";

/** The routing in effect for one worker set. */
export interface RoutingPolicy {
  mode: RouterMode;
  overlapScoreWeight: number;
  routerTemperature: number;
  /** Session affinity lifetime, seconds; undefined: no affinity. */
  sessionAffinityTtlSecs: number | undefined;
}

/** Dynamo's `KvRouterConfig` defaults (reference §7): what a card's unset tuning means. */
export const DYNAMO_KV_DEFAULTS = { overlapScoreWeight: 1.0, routerTemperature: 0.0 } as const;

/** How a set that advertises nothing is routed: Dynamo's defaults, KV mode, no session affinity. */
export const TRACKER_DEFAULTS: RoutingPolicy = {
  mode: "kv",
  ...DYNAMO_KV_DEFAULTS,
  sessionAffinityTtlSecs: undefined,
};

/** What a worker brings to the resolution. */
export interface Advertiser {
  readonly workerId: bigint;
  readonly routerConfig?: RouterCard;
}

export interface Advertisement {
  policy: RoutingPolicy;
  /** The worker whose card decided; undefined when the set inherited the defaults. */
  decidedBy: bigint | undefined;
  /** Workers that advertise a card. */
  cards: number;
  /** Cards whose effective routing differs from the deciding card's. */
  disagreeing: number;
}

/**
 * A card as the policy it stands for. Whole, not merged: unset tuning takes Dynamo's defaults and an
 * unset TTL means no affinity, whatever the tracker's defaults say (the seed's
 * `session_affinity_ttl_is_taken_whole_or_not_at_all`).
 */
export function policyOfCard(card: RouterCard): RoutingPolicy {
  return {
    mode: card.routerMode,
    overlapScoreWeight: card.overlapScoreWeight ?? DYNAMO_KV_DEFAULTS.overlapScoreWeight,
    routerTemperature: card.routerTemperature ?? DYNAMO_KV_DEFAULTS.routerTemperature,
    sessionAffinityTtlSecs: card.sessionAffinityTtlSecs,
  };
}

/** Whether two policies route differently; KV tuning matters only in KV mode. */
export function policiesDiffer(a: RoutingPolicy, b: RoutingPolicy): boolean {
  if (a.mode !== b.mode || a.sessionAffinityTtlSecs !== b.sessionAffinityTtlSecs) return true;
  return (
    a.mode === "kv" &&
    (a.overlapScoreWeight !== b.overlapScoreWeight || a.routerTemperature !== b.routerTemperature)
  );
}

/**
 * Resolves a set's routing from its workers' cards, `workers` in registration order. Workers
 * without a card say nothing and cast no vote. Unlike the seed, which compares modes only, a card
 * counts as disagreeing when any part of its routing differs: the first card is taken whole, so a
 * different TTL or weight elsewhere would otherwise be dropped without a word.
 */
export function resolveAdvertisement(workers: Iterable<Advertiser>, defaults: RoutingPolicy): Advertisement {
  let first: { workerId: bigint; policy: RoutingPolicy } | undefined;
  let cards = 0;
  let disagreeing = 0;
  for (const { workerId, routerConfig } of workers) {
    if (routerConfig === undefined) continue;
    cards++;
    const policy = policyOfCard(routerConfig);
    if (first === undefined) first = { workerId, policy };
    else if (policiesDiffer(policy, first.policy)) disagreeing++;
  }
  if (first === undefined) return { policy: defaults, decidedBy: undefined, cards: 0, disagreeing: 0 };
  return { policy: first.policy, decidedBy: first.workerId, cards, disagreeing };
}

/** The `x-slot-tracker-warning` text for a set whose cards disagree. */
export function conflictWarning(workerType: WorkerType, ad: Advertisement): string {
  return (
    `${workerType} workers advertise conflicting router_config cards: ${ad.disagreeing} of ${ad.cards} ` +
    `differ from worker ${ad.decidedBy}'s (router_mode=${ad.policy.mode}), which decides`
  );
}

/**
 * A card as it travels on the wire and sits in storage (snake_case, unset fields absent). A type
 * literal rather than an interface, so it is assignable to the JSON writer's indexed object type.
 */
export type WireCard = {
  router_mode: RouterMode;
  overlap_score_weight?: number;
  router_temperature?: number;
  session_affinity_ttl_secs?: number;
};

export function cardToWire(card: RouterCard): WireCard {
  const wire: WireCard = { router_mode: card.routerMode };
  if (card.overlapScoreWeight !== undefined) wire.overlap_score_weight = card.overlapScoreWeight;
  if (card.routerTemperature !== undefined) wire.router_temperature = card.routerTemperature;
  if (card.sessionAffinityTtlSecs !== undefined) wire.session_affinity_ttl_secs = card.sessionAffinityTtlSecs;
  return wire;
}

export function cardFromWire(wire: WireCard): RouterCard {
  const card: RouterCard = { routerMode: wire.router_mode };
  if (wire.overlap_score_weight !== undefined) card.overlapScoreWeight = wire.overlap_score_weight;
  if (wire.router_temperature !== undefined) card.routerTemperature = wire.router_temperature;
  if (wire.session_affinity_ttl_secs !== undefined)
    card.sessionAffinityTtlSecs = wire.session_affinity_ttl_secs;
  return card;
}

/** The worker's type and card, keeping only what was given (absent stays absent in `/workers`). */
export function profileOf(input: { workerType?: WorkerType; routerConfig?: RouterCard }): {
  workerType?: WorkerType;
  routerConfig?: RouterCard;
} {
  const profile: { workerType?: WorkerType; routerConfig?: RouterCard } = {};
  if (input.workerType !== undefined) profile.workerType = input.workerType;
  if (input.routerConfig !== undefined) profile.routerConfig = input.routerConfig;
  return profile;
}
