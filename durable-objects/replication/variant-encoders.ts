/**
 * Writers of the `data` variants that are this tracker's own, not Dynamo's, and rarer than its
 * bookings: `RegisterWorker` (with the worker's optional type, routing card and, last,
 * incarnation), `SessionBound`,
 * `LeaseGrant` and `LeaseCut` (the rest of the event: `event-encoder.ts`; their readers:
 * `variant-decoders.ts`).
 */
import type { BindEvent, LeaseCutEvent, LeaseEvent, RegisterEvent } from "../core/replica/events";
import type { RouterCard } from "../types";
import type { MsgpackWriter } from "./msgpack-writer";

/** Ours: `{"SessionBound": {session_id, hop, expires_at}}`, the rank in `worker`. */
export function writeBind(w: MsgpackWriter, e: BindEvent): void {
  w.str("data");
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

/** Ours: `{"LeaseGrant": {owner, at, deadline}}` or `{"LeaseCut": {owner, at}}`. */
export function writeLease(w: MsgpackWriter, e: LeaseEvent | LeaseCutEvent): void {
  w.str("data");
  w.mapHeader(1);
  w.str(e.type === "lease" ? "LeaseGrant" : "LeaseCut");
  w.mapHeader(e.type === "lease" ? 3 : 2);
  w.str("owner");
  w.str(e.owner);
  w.str("at");
  w.uint(e.at, "at");
  if (e.type === "lease") {
    w.str("deadline");
    w.uint(e.deadline, "deadline");
  }
}

export function writeRegister(w: MsgpackWriter, e: RegisterEvent): void {
  w.str("data");
  w.mapHeader(1);
  w.str("RegisterWorker");
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
