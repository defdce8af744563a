/**
 * Reads the event maps `event-encoder.ts` writes. Keys may come in any order; a key this version
 * does not know is skipped (bounded in depth), so a newer replica can add fields during a deploy.
 * Everything else must match: each known field has one type, a field appears at most once, every
 * required one is there, and variants are the twelve this codec writes (an add's `owner` and `grant`
 * come both or not at all). Decoded events carry no
 * `undefined` keys: an absent optional stays absent.
 */
import type { AddEvent, ReplicaEvent } from "../core/replica/events";
import type { CachePrompt } from "../types";
import { type CatalogUpsertData, readCatalogUpsert } from "./catalog-codec";
import { type KvEventsData, type KvRankData, readKv } from "./kv-codec";
import { once, readMap, requireKeys } from "./map-fields";
import type { MsgpackReader } from "./msgpack-reader";
import {
  type BindData,
  type LeaseCutData,
  type LeaseData,
  type RegisterData,
  readBind,
  readGrant,
  readLease,
  readRegister,
} from "./variant-decoders";

/** Bits of the event fields seen so far; `REQUIRED` are the ones every event must have. */
const F = { request_id: 1, worker: 2, data: 4, router_id: 8, lora_name: 16, origin: 32, clock: 64 } as const;
const STARTED_AT = 128;
const DEADLINE = 256;
const CACHE_PROMPT = 512;
const OWNER = 1024;
const GRANT = 2048;
const REQUIRED = F.request_id | F.worker | F.data | F.router_id | F.origin | F.clock;

type Unit = "free" | "prefill_complete" | "unregister" | "catalog_remove";
const UNITS = new Map<string, Unit>([
  ["Free", "free"],
  ["MarkPrefillCompleted", "prefill_complete"],
  ["UnregisterWorker", "unregister"],
  ["CatalogRemove", "catalog_remove"],
]);
type AddData = Pick<
  AddEvent,
  "hashes" | "newIslTokens" | "expectedOutputTokens" | "expectedPrefillDurationMs"
>;
type Data =
  | { type: Unit }
  | ({ type: "add" } & AddData)
  | ({ type: "register" } & RegisterData)
  | ({ type: "bind" } & BindData)
  | ({ type: "catalog_upsert" } & CatalogUpsertData)
  | LeaseData
  | LeaseCutData
  | KvEventsData
  | KvRankData;

export function readEvent(r: MsgpackReader): ReplicaEvent {
  let requestId = "";
  let workerId = 0n;
  let dpRank = 0;
  let data: Data | undefined;
  let origin = "";
  let ts = 0;
  let startedAt = 0;
  let deadline = 0;
  let cachePrompt: CachePrompt | null | undefined;
  let owner = "";
  let grant: { at: number; deadline: number } | undefined;
  let seen = 0;
  for (let n = r.mapHeader("event"); n > 0; n--) {
    const at = r.pos;
    const key = r.key("event");
    let bit = 0;
    switch (key) {
      case "request_id":
        requestId = r.str("request_id");
        bit = F.request_id;
        break;
      case "worker": {
        let fields = 0;
        for (let m = r.mapHeader("worker"); m > 0; m--) {
          const wAt = r.pos;
          const k = r.key("worker");
          let wBit = 0;
          if (k === "worker_id") {
            workerId = r.bigU64("worker.worker_id");
            wBit = 1;
          } else if (k === "dp_rank") {
            dpRank = r.u32("worker.dp_rank");
            wBit = 2;
          }
          fields = once(r, fields, wBit, "worker", k, wAt);
        }
        requireKeys("worker", fields, 3, "worker_id, dp_rank");
        bit = F.worker;
        break;
      }
      case "data":
        data = readData(r);
        bit = F.data;
        break;
      case "router_id":
        r.u64Words("router_id", false);
        bit = F.router_id;
        break;
      case "lora_name":
        if (!r.nil()) r.str("lora_name");
        bit = F.lora_name;
        break;
      case "origin":
        origin = r.key("origin");
        bit = F.origin;
        break;
      case "clock":
        ts = r.uint("clock");
        bit = F.clock;
        break;
      case "started_at":
        startedAt = r.uint("started_at");
        bit = STARTED_AT;
        break;
      case "deadline":
        deadline = r.uint("deadline");
        bit = DEADLINE;
        break;
      case "cache_prompt":
        cachePrompt = r.nil() ? null : readCachePrompt(r);
        bit = CACHE_PROMPT;
        break;
      case "owner":
        owner = r.key("owner");
        bit = OWNER;
        break;
      case "grant":
        grant = readGrant(r);
        bit = GRANT;
        break;
    }
    seen = once(r, seen, bit, "event", key, at);
  }
  requireKeys("event", seen, REQUIRED, "request_id, worker, data, router_id, origin, clock");
  const d = data!;
  switch (d.type) {
    case "add": {
      requireKeys("AddRequest event", seen, STARTED_AT | DEADLINE, "started_at, deadline");
      const { hashes, newIslTokens, expectedOutputTokens: eot, expectedPrefillDurationMs: ms } = d;
      const add: AddEvent = {
        ts,
        origin,
        type: "add",
        requestId,
        workerId,
        dpRank,
        hashes,
        newIslTokens,
        startedAt,
        deadline,
      };
      if (eot !== undefined) add.expectedOutputTokens = eot;
      if (ms !== undefined) add.expectedPrefillDurationMs = ms;
      if (cachePrompt !== undefined) add.cachePrompt = cachePrompt;
      const owned = seen & (OWNER | GRANT);
      if (owned === (OWNER | GRANT)) {
        add.owner = owner;
        add.grant = grant;
      } else if (owned !== 0) requireKeys("owned AddRequest event", seen, OWNER | GRANT, "owner, grant");
      return add;
    }
    case "register": {
      const { type, ...rest } = d;
      return { ts, origin, type, workerId, ...rest };
    }
    case "unregister":
    case "catalog_remove":
      return { ts, origin, type: d.type, workerId };
    case "catalog_upsert": {
      const { type, ...rest } = d;
      // The record's id is the event's worker.
      return { ts, origin, type, workerId, ...rest, fields: { ...rest.fields, workerId } };
    }
    case "bind": {
      const { type, ...rest } = d;
      return { ts, origin, type, workerId, dpRank, ...rest };
    }
    case "lease":
      return { ts, origin, type: d.type, owner: d.owner, at: d.at, deadline: d.deadline };
    case "lease_cut":
      return { ts, origin, type: d.type, owner: d.owner, at: d.at };
    case "kv_events":
    case "kv_rank":
      return { ts, origin, workerId, dpRank, ...d };
    default:
      return { ts, origin, type: d.type, requestId };
  }
}

function readData(r: MsgpackReader): Data {
  const at = r.pos;
  const unit = r.keyOrNot("data");
  if (unit !== undefined) {
    const type = UNITS.get(unit);
    return type === undefined ? r.fail("data", "a known variant", at) : { type };
  }
  if (r.mapHeader("data") !== 1) r.fail("data", "a map of one variant", at);
  const variantAt = r.pos;
  const variant = r.key("data");
  if (variant === "AddRequest") return readAdd(r);
  if (variant === "RegisterWorker") return readRegister(r);
  if (variant === "SessionBound") return readBind(r);
  if (variant === "CatalogUpsert") return readCatalogUpsert(r);
  if (variant === "LeaseGrant" || variant === "LeaseCut") return readLease(r, variant);
  if (variant === "KvEvents" || variant === "KvRank") return readKv(r, variant);
  return r.fail(
    "data",
    "AddRequest, RegisterWorker, SessionBound, CatalogUpsert, LeaseGrant, LeaseCut, KvEvents or KvRank",
    variantAt,
  );
}

function readAdd(r: MsgpackReader): Data {
  const data: { type: "add" } & AddData = { type: "add", hashes: EMPTY, newIslTokens: 0 };
  let track = true;
  let seen = 0;
  for (let n = r.mapHeader("AddRequest"); n > 0; n--) {
    const at = r.pos;
    const key = r.key("AddRequest");
    let bit = 0;
    switch (key) {
      case "token_sequence":
        data.hashes = r.hashes("token_sequence");
        bit = 1;
        break;
      case "track_prefill_tokens":
        track = r.bool("track_prefill_tokens");
        bit = 2;
        break;
      case "expected_output_tokens":
        if (!r.nil()) data.expectedOutputTokens = r.u32("expected_output_tokens");
        bit = 4;
        break;
      case "prefill_load_hint":
        if (!r.nil()) readHint(r, data);
        bit = 8;
        break;
    }
    seen = once(r, seen, bit, "AddRequest", key, at);
  }
  requireKeys("AddRequest", seen, 1, "token_sequence");
  // Dynamo's `track_prefill_tokens: false` books no prefill load.
  if (!track) data.newIslTokens = 0;
  return data;
}

const EMPTY = new BigUint64Array(0);

function readCachePrompt(r: MsgpackReader): CachePrompt {
  const prompt: CachePrompt = { blockHashes: EMPTY };
  const seen = readMap(r, "cache_prompt", (key) => {
    if (key === "block_hashes") prompt.blockHashes = r.hashes("cache_prompt.block_hashes");
    else if (key === "sequence_hashes") prompt.sequenceHashes = r.hashes("cache_prompt.sequence_hashes");
    else return 0;
    return key === "block_hashes" ? 1 : 2;
  });
  requireKeys("cache_prompt", seen, 1, "block_hashes");
  return prompt;
}

function readHint(r: MsgpackReader, data: AddData): void {
  let seen = 0;
  for (let n = r.mapHeader("prefill_load_hint"); n > 0; n--) {
    const at = r.pos;
    const key = r.key("prefill_load_hint");
    let bit = 0;
    if (key === "initial_effective_prefill_tokens") {
      data.newIslTokens = r.uint("initial_effective_prefill_tokens");
      bit = 1;
    } else if (key === "expected_prefill_duration") {
      if (!r.nil()) data.expectedPrefillDurationMs = readDuration(r);
      bit = 2;
    }
    seen = once(r, seen, bit, "prefill_load_hint", key, at);
  }
  requireKeys("prefill_load_hint", seen, 1, "initial_effective_prefill_tokens");
}

function readDuration(r: MsgpackReader): number {
  let secs = 0;
  let nanos = 0;
  const seen = readMap(r, "expected_prefill_duration", (key) => {
    if (key === "secs") secs = r.uintApprox("secs");
    else if (key === "nanos") nanos = r.u32("nanos");
    else return 0;
    return key === "secs" ? 1 : 2;
  });
  requireKeys("expected_prefill_duration", seen, 3, "secs, nanos");
  return secs * 1000 + nanos / 1e6;
}
