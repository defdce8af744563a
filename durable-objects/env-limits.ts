import type { TrackerLimits } from "./core/tracker";
import { DEFAULT_OWNED_REQUEST_MAX_AGE_SECONDS, DEFAULT_REQUEST_EXPIRY_SECONDS } from "./limits";

/** Resource caps a deployment may lower or raise through wrangler vars (unset: `limits.ts`). */
export interface LimitsEnv {
  /** Live requests per tracker (default 50,000). */
  MAX_LIVE_REQUESTS?: string;
  /** Prompt blocks held by a tracker's live requests together (default 1,500,000). */
  MAX_LIVE_BLOCKS?: string;
  /** (block, rank) entries of a tracker's cache index (default 200,000). */
  MAX_CACHE_INDEX_ENTRIES?: string;
  /** (block, rank) entries of a tracker's engine-event index (default `MAX_CACHED_BLOCKS`). */
  MAX_CACHED_BLOCKS?: string;
  /** Live leases per tracker (default 1,024). */
  MAX_LEASES?: string;
  /** Live bookings one lease owner may hold (default 50,000). */
  MAX_BOOKINGS_PER_OWNER?: string;
}

/**
 * The caps the environment sets; a missing, non-integer or non-positive value leaves the default, so a
 * typo can never switch a cap off.
 */
export function trackerLimitsOf(env: LimitsEnv): Partial<TrackerLimits> {
  const limits: Partial<TrackerLimits> = {};
  const maxLiveRequests = positiveInteger(env.MAX_LIVE_REQUESTS);
  if (maxLiveRequests !== undefined) limits.maxLiveRequests = maxLiveRequests;
  const maxLiveBlocks = positiveInteger(env.MAX_LIVE_BLOCKS);
  if (maxLiveBlocks !== undefined) limits.maxLiveBlocks = maxLiveBlocks;
  const maxCacheEntries = positiveInteger(env.MAX_CACHE_INDEX_ENTRIES);
  if (maxCacheEntries !== undefined) limits.maxCacheEntries = maxCacheEntries;
  const maxCachedBlocks = positiveInteger(env.MAX_CACHED_BLOCKS);
  if (maxCachedBlocks !== undefined) limits.maxCachedBlocks = maxCachedBlocks;
  const maxLeases = positiveInteger(env.MAX_LEASES);
  if (maxLeases !== undefined) limits.maxLeases = maxLeases;
  const maxBookingsPerOwner = positiveInteger(env.MAX_BOOKINGS_PER_OWNER);
  if (maxBookingsPerOwner !== undefined) limits.maxBookingsPerOwner = maxBookingsPerOwner;
  return limits;
}

function positiveInteger(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^\s*\d+\s*$/.test(raw)) return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** A positive number from the environment, else `fallback` (replication timings and caps). */
export function positiveOr(raw: string | undefined, fallback: number): number {
  const value = Number(raw);
  return raw !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}

/** `REQUEST_EXPIRY_SECONDS`; like Dynamo, an invalid or zero value falls back to the default. */
export function expirySecondsOf(env: { REQUEST_EXPIRY_SECONDS?: string }): number {
  const seconds = Number(env.REQUEST_EXPIRY_SECONDS);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_REQUEST_EXPIRY_SECONDS;
}

/**
 * `OWNED_REQUEST_MAX_AGE_SECONDS`, the age guard of owned bookings (SPEC §8); read as
 * `REQUEST_EXPIRY_SECONDS` is, so an invalid or zero value falls back to the default.
 */
export function ownedMaxAgeSecondsOf(env: { OWNED_REQUEST_MAX_AGE_SECONDS?: string }): number {
  const seconds = Number(env.OWNED_REQUEST_MAX_AGE_SECONDS);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_OWNED_REQUEST_MAX_AGE_SECONDS;
}
