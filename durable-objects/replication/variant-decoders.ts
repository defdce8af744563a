/**
 * Readers of the `data` variants that are this tracker's own, not Dynamo's: `RegisterWorker` (with
 * the worker's optional type, routing card and incarnation), `SessionBound`, `LeaseGrant` and
 * `LeaseCut`. `UnregisterWorker` is a unit variant, read with Dynamo's in `event-decoder.ts`.
 */
import type { BindEvent, LeaseCutEvent, LeaseEvent, RegisterEvent } from "../core/replica/events";
import type { RouterCard, RouterMode, WorkerType } from "../types";
import { oneOf, readMap, requireKeys } from "./map-fields";
import type { MsgpackReader } from "./msgpack-reader";

export type RegisterData = Pick<
  RegisterEvent,
  "blockSize" | "dpStart" | "dpSize" | "workerType" | "routerConfig" | "incarnation"
>;
export type BindData = Pick<BindEvent, "sessionId" | "hop" | "expiresAt">;
export type LeaseData = Pick<LeaseEvent, "type" | "owner" | "at" | "deadline">;
export type LeaseCutData = Pick<LeaseCutEvent, "type" | "owner" | "at">;

const WORKER_TYPES: readonly WorkerType[] = ["decode", "prefill"];
const ROUTER_MODES: readonly RouterMode[] = ["kv", "round_robin", "random"];
const HOPS: readonly BindEvent["hop"][] = ["decode", "prefill"];

export function readBind(r: MsgpackReader): { type: "bind" } & BindData {
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

/** `LeaseGrant` {owner, at, deadline} or `LeaseCut` {owner, at}: every field required. */
export function readLease(r: MsgpackReader, variant: "LeaseGrant" | "LeaseCut"): LeaseData | LeaseCutData {
  let owner = "";
  let at = 0;
  let deadline = 0;
  const seen = readMap(r, variant, (key) => {
    switch (key) {
      case "owner":
        owner = r.key("owner");
        return 1;
      case "at":
        at = r.uint("at");
        return 2;
      case "deadline":
        if (variant !== "LeaseGrant") return 0;
        deadline = r.uint("deadline");
        return 4;
      default:
        return 0;
    }
  });
  if (variant === "LeaseCut") {
    requireKeys(variant, seen, 3, "owner, at");
    return { type: "lease_cut", owner, at };
  }
  requireKeys(variant, seen, 7, "owner, at, deadline");
  return { type: "lease", owner, at, deadline };
}

/** An owned add's `grant`: the lease grant it was made under (epoch ms). */
export function readGrant(r: MsgpackReader): { at: number; deadline: number } {
  const grant = { at: 0, deadline: 0 };
  const seen = readMap(r, "grant", (key) => {
    if (key === "at") grant.at = r.uint("grant.at");
    else if (key === "deadline") grant.deadline = r.uint("grant.deadline");
    else return 0;
    return key === "at" ? 1 : 2;
  });
  requireKeys("grant", seen, 3, "at, deadline");
  return grant;
}

export function readRegister(r: MsgpackReader): { type: "register" } & RegisterData {
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
      case "incarnation":
        // Absent in an event written before incarnations, and then the registration has none.
        if (!r.nil()) data.incarnation = r.bigU64("incarnation");
        return 32;
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
