/**
 * Writes a `ReplicaEvent` as the map Dynamo's `ActiveSequenceEvent` serialises to with
 * `rmp_serde::to_vec_named` (reference §5.1, §5.5), followed by this tracker's own fields:
 *
 *   request_id  string ("" for worker events)
 *   worker      { worker_id: u64, dp_rank: u32 } ({0, 0} for free/prefill marks, which name no worker:
 *               Dynamo's receivers take the rank from their own index for those anyway)
 *   data        { "AddRequest": {…} } | "Free" | "MarkPrefillCompleted"
 *               | { "RegisterWorker": {…} } | "UnregisterWorker" | { "SessionBound": {…} }
 *               | { "CatalogUpsert": {…} } | "CatalogRemove" (the last five are ours;
 *               `catalog-codec.ts`); `RegisterWorker`'s map ends with `incarnation: u64` when
 *               the registration gave one (an older replica skips the key)
 *   router_id   u64, FNV-1a 64 of the origin's name (`routerIdOf`)
 *   lora_name   nil
 *   origin      string; clock: the HLC time `ts`, uint
 *   started_at, deadline   epoch ms, uint (add only)
 *   cache_prompt   nil | { block_hashes: [u64], sequence_hashes?: [u64] } (add only, when the
 *               booking says what the cache index records: `AddInput.cachePrompt`; an older
 *               replica skips the key and records the add's `token_sequence`)
 *
 * The prefill load hint is always written, even for 0 tokens and no duration, where Dynamo would
 * write nil: then `newIslTokens` comes back exactly as given (a nil hint reads as 0 too).
 */

import type { AddEvent, BindEvent, RegisterEvent, ReplicaEvent } from "../core/replica/events";
import type { CachePrompt, RouterCard } from "../types";
import { writeCatalogUpsert } from "./catalog-codec";
import { MsgpackWriter } from "./msgpack-writer";

const TWO_32 = 0x1_0000_0000;

/** Constant runs of the layout, encoded once: strings become fixstr/str8, numbers raw bytes. */
function chunk(...parts: (string | number)[]): Uint8Array {
  const w = new MsgpackWriter();
  for (const part of parts) {
    if (typeof part === "string") w.str(part);
    else w.byte(part);
  }
  return w.finish();
}

const HEAD = chunk(0x87, "request_id");
const ADD_HEAD = chunk(0x89, "request_id");
const CACHED_ADD_HEAD = chunk(0x8a, "request_id");
const WORKER = chunk("worker", 0x82, "worker_id");
const DP_RANK = chunk("dp_rank");
const DATA = chunk("data");
const ADD_DATA = chunk("data", 0x81, "AddRequest", 0x84, "token_sequence");
const TRACK = chunk("track_prefill_tokens", 0xc3, "expected_output_tokens");
const HINT = chunk("prefill_load_hint", 0x82, "initial_effective_prefill_tokens");
const DURATION = chunk("expected_prefill_duration");
const SECS = chunk(0x82, "secs");
const NANOS = chunk("nanos");
const REGISTER_DATA = chunk("data", 0x81, "RegisterWorker");
const ROUTER_ID = chunk("router_id");
const LORA_ORIGIN = chunk("lora_name", 0xc0, "origin");
const CLOCK = chunk("clock");
const STARTED_AT = chunk("started_at");
const DEADLINE = chunk("deadline");
const CACHE_PROMPT = chunk("cache_prompt");

const FNV_OFFSET = 0xcbf2_9ce4_8422_2325n;
const FNV_PRIME = 0x100_0000_01b3n;
const U64_MASK = 0xffff_ffff_ffff_ffffn;
/** Replica names are few; the cap only bounds memory if something passes arbitrary names. */
const MAX_CACHED_ORIGINS = 256;
const routerIds = new Map<string, [hi: number, lo: number]>();
const utf8 = new TextEncoder();

/** The `router_id` written for events of `origin`: FNV-1a 64 over the name's UTF-8 bytes. */
export function routerIdOf(origin: string): bigint {
  let h = FNV_OFFSET;
  for (const byte of utf8.encode(origin)) h = ((h ^ BigInt(byte)) * FNV_PRIME) & U64_MASK;
  return h;
}

function routerIdWords(origin: string): [number, number] {
  let words = routerIds.get(origin);
  if (words === undefined) {
    const id = routerIdOf(origin);
    words = [Number(id >> 32n), Number(id & 0xffff_ffffn)];
    if (routerIds.size >= MAX_CACHED_ORIGINS) routerIds.clear();
    routerIds.set(origin, words);
  }
  return words;
}

export function writeEvent(w: MsgpackWriter, e: ReplicaEvent): void {
  switch (e.type) {
    case "add":
      w.raw(e.cachePrompt === undefined ? ADD_HEAD : CACHED_ADD_HEAD);
      w.str(e.requestId);
      writeWorker(w, e.workerId, e.dpRank);
      writeAdd(w, e);
      break;
    case "register":
      writeWorkerHead(w, e.workerId);
      writeRegister(w, e);
      break;
    case "unregister":
      writeWorkerHead(w, e.workerId);
      writeUnit(w, "UnregisterWorker");
      break;
    case "catalog_upsert":
      writeWorkerHead(w, e.workerId);
      writeCatalogUpsert(w, e);
      break;
    case "catalog_remove":
      writeWorkerHead(w, e.workerId);
      writeUnit(w, "CatalogRemove");
      break;
    case "bind":
      w.raw(HEAD);
      w.str("");
      writeWorker(w, e.workerId, e.dpRank);
      writeBind(w, e);
      break;
    case "prefill_complete":
    case "free":
      w.raw(HEAD);
      w.str(e.requestId);
      writeWorker(w, 0n, 0);
      writeUnit(w, e.type === "free" ? "Free" : "MarkPrefillCompleted");
      break;
    default:
      throw new Error(`event-codec: unknown event type ${(e as { type: unknown }).type}`);
  }
  const [hi, lo] = routerIdWords(e.origin);
  w.raw(ROUTER_ID);
  w.u64(hi, lo);
  w.raw(LORA_ORIGIN);
  w.str(e.origin);
  w.raw(CLOCK);
  w.uint(e.ts, "ts");
  if (e.type === "add") {
    w.raw(STARTED_AT);
    w.uint(e.startedAt, "startedAt");
    w.raw(DEADLINE);
    w.uint(e.deadline, "deadline");
    if (e.cachePrompt !== undefined) writeCachePrompt(w, e.cachePrompt);
  }
}

function writeCachePrompt(w: MsgpackWriter, prompt: CachePrompt | null): void {
  w.raw(CACHE_PROMPT);
  if (prompt === null) {
    w.nil();
    return;
  }
  w.mapHeader(prompt.sequenceHashes === undefined ? 1 : 2);
  w.str("block_hashes");
  w.u64Array(prompt.blockHashes);
  if (prompt.sequenceHashes !== undefined) {
    w.str("sequence_hashes");
    w.u64Array(prompt.sequenceHashes);
  }
}

function writeWorkerHead(w: MsgpackWriter, workerId: bigint): void {
  w.raw(HEAD);
  w.str("");
  writeWorker(w, workerId, 0);
}

function writeWorker(w: MsgpackWriter, workerId: bigint, dpRank: number): void {
  w.raw(WORKER);
  w.bigU64(workerId, "workerId");
  w.raw(DP_RANK);
  w.u32(dpRank, "dpRank");
}

function writeUnit(w: MsgpackWriter, variant: string): void {
  w.raw(DATA);
  w.str(variant);
}

function writeAdd(w: MsgpackWriter, e: AddEvent): void {
  w.raw(ADD_DATA);
  w.u64Array(e.hashes);
  w.raw(TRACK);
  if (e.expectedOutputTokens === undefined) w.nil();
  else w.u32(e.expectedOutputTokens, "expectedOutputTokens");
  w.raw(HINT);
  w.uint(e.newIslTokens, "newIslTokens");
  w.raw(DURATION);
  if (e.expectedPrefillDurationMs === undefined) w.nil();
  else writeDuration(w, e.expectedPrefillDurationMs);
}

/**
 * Milliseconds as a Rust `Duration` {secs: u64, nanos: u32}: exact for whole milliseconds, to the
 * nanosecond for fractions. Past u64 seconds (≈ 5.8e11 years) it saturates at `Duration::MAX`.
 */
function writeDuration(w: MsgpackWriter, ms: number): void {
  if (!(ms >= 0) || !Number.isFinite(ms)) {
    throw new Error(`event-codec: expectedPrefillDurationMs must be finite and ≥ 0, got ${ms}`);
  }
  let secs = Math.floor(ms / 1000);
  let rest = ms - secs * 1000;
  // ms / 1000 can round up to the next whole second.
  if (rest < 0) {
    secs -= 1;
    rest += 1000;
  }
  let nanos = Math.round(rest * 1e6);
  if (nanos >= 1e9) {
    secs += 1;
    nanos -= 1e9;
  }
  w.raw(SECS);
  if (secs >= TWO_32 * TWO_32) {
    w.u64(0xffff_ffff, 0xffff_ffff);
    nanos = 999_999_999;
  } else {
    const hi = Math.floor(secs / TWO_32);
    w.u64(hi, secs - hi * TWO_32);
  }
  w.raw(NANOS);
  w.uint(nanos, "nanos");
}

/** Ours: `{"SessionBound": {session_id, hop, expires_at}}`, the rank in `worker`. */
function writeBind(w: MsgpackWriter, e: BindEvent): void {
  w.raw(DATA);
  w.mapHeader(1);
  w.str("SessionBound");
  w.mapHeader(3);
  w.str("session_id");
  w.str(e.sessionId);
  w.str("hop");
  w.str(e.hop);
  w.str("expires_at");
  w.uint(e.expiresAt, "expiresAt");
}

function writeRegister(w: MsgpackWriter, e: RegisterEvent): void {
  w.raw(REGISTER_DATA);
  w.mapHeader(
    3 +
      (e.workerType === undefined ? 0 : 1) +
      (e.routerConfig === undefined ? 0 : 1) +
      (e.incarnation === undefined ? 0 : 1),
  );
  w.str("block_size");
  w.u32(e.blockSize, "blockSize");
  w.str("dp_start");
  w.u32(e.dpStart, "dpStart");
  w.str("dp_size");
  w.u32(e.dpSize, "dpSize");
  if (e.workerType !== undefined) {
    w.str("worker_type");
    w.str(e.workerType);
  }
  if (e.routerConfig !== undefined) {
    w.str("router_config");
    writeRouterCard(w, e.routerConfig);
  }
  // Only when given: an older replica skips the key and merges the registration by its key alone.
  if (e.incarnation !== undefined) {
    w.str("incarnation");
    w.bigU64(e.incarnation, "incarnation");
  }
}

/** Only the card's defined fields, snake_case as on the HTTP API; tuning numbers are f64 as in Dynamo. */
function writeRouterCard(w: MsgpackWriter, card: RouterCard): void {
  const { overlapScoreWeight: weight, routerTemperature: temperature, sessionAffinityTtlSecs: ttl } = card;
  w.mapHeader(
    1 + (weight === undefined ? 0 : 1) + (temperature === undefined ? 0 : 1) + (ttl === undefined ? 0 : 1),
  );
  w.str("router_mode");
  w.str(card.routerMode);
  if (weight !== undefined) {
    w.str("overlap_score_weight");
    w.f64(weight);
  }
  if (temperature !== undefined) {
    w.str("router_temperature");
    w.f64(temperature);
  }
  if (ttl !== undefined) {
    w.str("session_affinity_ttl_secs");
    w.u32(ttl, "sessionAffinityTtlSecs");
  }
}
