/**
 * Reads the event maps `event-encoder.ts` writes. Keys may come in any order; a key this version
 * does not know is skipped (bounded in depth), so a newer replica can add fields during a deploy.
 * Everything else must match: each known field has one type, a field appears at most once, every
 * required one is there, and variants are the six this codec writes. Decoded events carry no
 * `undefined` keys: an absent optional stays absent.
 */
import type { RouterCard, RouterMode, WorkerType } from "../types";
import type { AddEvent, BindEvent, RegisterEvent, ReplicaEvent } from "../core/events";
import { CodecError, type MsgpackReader } from "./msgpack-reader";

const WORKER_TYPES: readonly WorkerType[] = ["decode", "prefill"];
const ROUTER_MODES: readonly RouterMode[] = ["kv", "round_robin", "random"];
/** Bits of the event fields seen so far; `REQUIRED` are the ones every event must have. */
const F = { request_id: 1, worker: 2, data: 4, router_id: 8, lora_name: 16, origin: 32, clock: 64 } as const;
const STARTED_AT = 128;
const DEADLINE = 256;
const REQUIRED = F.request_id | F.worker | F.data | F.router_id | F.origin | F.clock;

type Unit = "free" | "prefill_complete" | "unregister";
const UNITS = new Map<string, Unit>([
  ["Free", "free"],
  ["MarkPrefillCompleted", "prefill_complete"],
  ["UnregisterWorker", "unregister"],
]);
type AddData = Pick<
  AddEvent,
  "hashes" | "newIslTokens" | "expectedOutputTokens" | "expectedPrefillDurationMs"
>;
type RegisterData = Pick<RegisterEvent, "blockSize" | "dpStart" | "dpSize" | "workerType" | "routerConfig">;
type BindData = Pick<BindEvent, "sessionId" | "hop" | "expiresAt">;
type Data =
  | { type: Unit }
  | ({ type: "add" } & AddData)
  | ({ type: "register" } & RegisterData)
  | ({ type: "bind" } & BindData);
const HOPS: readonly BindEvent["hop"][] = ["decode", "prefill"];

/** Reads a map, calling `field` for each key; returns a bitmask of the keys `field` knew (cold paths). */
function readMap(r: MsgpackReader, what: string, field: (key: string) => number): number {
  let seen = 0;
  for (let n = r.mapHeader(what); n > 0; n--) {
    const at = r.pos;
    const key = r.key(what);
    seen = once(r, seen, field(key), what, key, at);
  }
  return seen;
}

/** Adds a field's bit to `seen`; a key of bit 0 is unknown, and its value is skipped. */
function once(r: MsgpackReader, seen: number, bit: number, what: string, key: string, at: number): number {
  if (bit === 0) r.skip(`${what}.${key}`);
  else if (seen & bit) r.fail(what, `no repeated key "${key}"`, at);
  return seen | bit;
}

function requireKeys(what: string, seen: number, required: number, names: string): void {
  if ((seen & required) !== required) throw new CodecError(`event-codec: ${what} lacks one of ${names}`);
}

export function readEvent(r: MsgpackReader): ReplicaEvent {
  let requestId = "";
  let workerId = 0n;
  let dpRank = 0;
  let data: Data | undefined;
  let origin = "";
  let ts = 0;
  let startedAt = 0;
  let deadline = 0;
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
      return add;
    }
    case "register": {
      const { type, ...rest } = d;
      return { ts, origin, type, workerId, ...rest };
    }
    case "unregister":
      return { ts, origin, type: d.type, workerId };
    case "bind": {
      const { type, ...rest } = d;
      return { ts, origin, type, workerId, dpRank, ...rest };
    }
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
  return r.fail("data", "AddRequest, RegisterWorker or SessionBound", variantAt);
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

function readBind(r: MsgpackReader): Data {
  const data: { type: "bind" } & BindData = { type: "bind", sessionId: "", hop: "decode", expiresAt: 0 };
  const seen = readMap(r, "SessionBound", (key) => {
    switch (key) {
      case "session_id":
        data.sessionId = r.str("session_id");
        return 1;
      case "hop":
        data.hop = oneOf(r, "hop", HOPS);
        return 2;
      case "expires_at":
        data.expiresAt = r.uint("expires_at");
        return 4;
      default:
        return 0;
    }
  });
  requireKeys("SessionBound", seen, 7, "session_id, hop, expires_at");
  return data;
}

function readRegister(r: MsgpackReader): Data {
  const data: { type: "register" } & RegisterData = { type: "register", blockSize: 0, dpStart: 0, dpSize: 0 };
  const seen = readMap(r, "RegisterWorker", (key) => {
    switch (key) {
      case "block_size":
        data.blockSize = r.u32("block_size");
        return 1;
      case "dp_start":
        data.dpStart = r.u32("dp_start");
        return 2;
      case "dp_size":
        data.dpSize = r.u32("dp_size");
        return 4;
      case "worker_type":
        if (!r.nil()) data.workerType = oneOf(r, "worker_type", WORKER_TYPES);
        return 8;
      case "router_config":
        if (!r.nil()) data.routerConfig = readRouterCard(r);
        return 16;
      default:
        return 0;
    }
  });
  requireKeys("RegisterWorker", seen, 7, "block_size, dp_start, dp_size");
  return data;
}

function readRouterCard(r: MsgpackReader): RouterCard {
  const card: RouterCard = { routerMode: "kv" };
  const seen = readMap(r, "router_config", (key) => {
    switch (key) {
      case "router_mode":
        card.routerMode = oneOf(r, "router_mode", ROUTER_MODES);
        return 1;
      case "overlap_score_weight":
        if (!r.nil()) card.overlapScoreWeight = r.f64("overlap_score_weight");
        return 2;
      case "router_temperature":
        if (!r.nil()) card.routerTemperature = r.f64("router_temperature");
        return 4;
      case "session_affinity_ttl_secs":
        if (!r.nil()) card.sessionAffinityTtlSecs = r.u32("session_affinity_ttl_secs");
        return 8;
      default:
        return 0;
    }
  });
  requireKeys("router_config", seen, 1, "router_mode");
  return card;
}

function oneOf<T extends string>(r: MsgpackReader, what: string, values: readonly T[]): T {
  const at = r.pos;
  const value = r.key(what);
  if (!(values as readonly string[]).includes(value)) r.fail(what, values.join(" | "), at);
  return value as T;
}
