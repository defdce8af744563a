/**
 * Writes a `ReplicaEvent` as the map Dynamo's `ActiveSequenceEvent` serialises to with
 * `rmp_serde::to_vec_named` (reference §5.1, §5.5), followed by this tracker's own fields:
 *
 *   request_id  string ("" for worker events)
 *   worker      { worker_id: u64, dp_rank: u32 } ({0, 0} for free/prefill marks, which name no worker:
 *               Dynamo's receivers take the rank from their own index for those anyway)
 *   data        { "AddRequest": {…} } | "Free" | "MarkPrefillCompleted"
 *               | { "RegisterWorker": {…} } | "UnregisterWorker" | { "SessionBound": {…} }
 *               | { "CatalogUpsert": {…} } | "CatalogRemove"
 *               | { "LeaseGrant": { owner, at, deadline } } | { "LeaseCut": { owner, at } }
 *               | { "KvEvents": {…} } | { "KvRank": {…} }
 *               (the last nine are ours, the KV ones in `kv-codec.ts`; `variant-encoders.ts`, `catalog-codec.ts`; a lease's
 *               times are epoch ms, uint; `RegisterWorker`'s map ends with `incarnation: u64`
 *               when the registration gave one, which an older replica skips)
 *   router_id   u64, FNV-1a 64 of the origin's name (`routerIdOf`)
 *   lora_name   nil
 *   origin      string; clock: the HLC time `ts`, uint
 *   started_at, deadline   epoch ms, uint (add only)
 *   cache_prompt   nil | { block_hashes: [u64], sequence_hashes?: [u64] } (add only, when the
 *               booking says what the cache index records: `AddInput.cachePrompt`; an older
 *               replica skips the key and records the add's `token_sequence`)
 *   owner, grant   string, { at, deadline } epoch ms uint (add only, both or neither: an owned
 *               booking, SPEC §8; an older replica skips them and keeps the booking until its
 *               deadline, which is the owned age guard's)
 *
 * The prefill load hint is always written, even for 0 tokens and no duration, where Dynamo would
 * write nil: then `newIslTokens` comes back exactly as given (a nil hint reads as 0 too).
 */

import type { AddEvent, ReplicaEvent } from "../core/replica/events";
import type { CachePrompt } from "../types";
import { writeCatalogUpsert } from "./catalog-codec";
import { writeKv } from "./kv-codec";
import { MsgpackWriter } from "./msgpack-writer";
import { writeBind, writeLease, writeRegister } from "./variant-encoders";

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
/** An add's map header by its optional keys: +1 with `cache_prompt`, +2 with `owner` and `grant`. */
const ADD_HEADS = [0x89, 0x8a, 0x8b, 0x8c].map((size) => chunk(size, "request_id"));
const WORKER = chunk("worker", 0x82, "worker_id");
const DP_RANK = chunk("dp_rank");
const DATA = chunk("data");
const ADD_DATA = chunk("data", 0x81, "AddRequest", 0x84, "token_sequence");
const TRACK = chunk("track_prefill_tokens", 0xc3, "expected_output_tokens");
const HINT = chunk("prefill_load_hint", 0x82, "initial_effective_prefill_tokens");
const DURATION = chunk("expected_prefill_duration");
const SECS = chunk(0x82, "secs");
const NANOS = chunk("nanos");
const ROUTER_ID = chunk("router_id");
const LORA_ORIGIN = chunk("lora_name", 0xc0, "origin");
const CLOCK = chunk("clock");
const STARTED_AT = chunk("started_at");
const DEADLINE = chunk("deadline");
const CACHE_PROMPT = chunk("cache_prompt");
const OWNER = chunk("owner");
const GRANT_AT = chunk("grant", 0x82, "at");

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
      w.raw(ADD_HEADS[(e.cachePrompt === undefined ? 0 : 1) + (ownedAdd(e) ? 2 : 0)]!);
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
    case "lease":
    case "lease_cut":
      w.raw(HEAD);
      w.str("");
      writeWorker(w, 0n, 0);
      writeLease(w, e);
      break;
    case "kv_events":
    case "kv_rank":
      w.raw(HEAD);
      w.str("");
      writeWorker(w, e.workerId, e.dpRank);
      writeKv(w, e);
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
    if (ownedAdd(e)) {
      w.raw(OWNER);
      w.str(e.owner!);
      w.raw(GRANT_AT);
      w.uint(e.grant!.at, "grant.at");
      w.str("deadline");
      w.uint(e.grant!.deadline, "grant.deadline");
    }
  }
}

/** Whether an add is owned; an owner without its grant (or the reverse) is a bug the wire must not carry. */
function ownedAdd(e: AddEvent): boolean {
  if ((e.owner === undefined) !== (e.grant === undefined)) {
    throw new Error("event-codec: an add's owner and grant go together");
  }
  return e.owner !== undefined;
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
