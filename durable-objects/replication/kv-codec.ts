/**
 * The KV-event variants of the replication codec, ours (the rest of the event: `event-encoder.ts`),
 * and the encoding of a rank's changes that storage shares (`storage/kv-rows.ts`):
 *
 *   { "KvEvents": { epoch, epoch_ts, epoch_origin, first_seq, count, changes } }
 *   { "KvRank":   { epoch, epoch_ts, epoch_origin, next_seq, part, changes } }
 *
 * `epoch` is the sender's name, `epoch_ts`/`epoch_origin` the key that started it (uint, string).
 * `changes` is an array of arrays, each led by its kind:
 *   [0, tier, at, parent (u64 | nil), [engine hash u64…], [local hash u64…]]   stored
 *   [1, tier, [engine hash u64…]]                                               removed
 *   [2]                                                                         cleared
 * with `tier` the index in {@link TIERS} and `at` epoch ms (uint). An unknown kind or tier is refused.
 */
import type { StorageTier } from "../core/cache-index/cache-index";
import type { KvChange, KvEpoch } from "../core/kv-events/kv-stream";
import type { KvEventsEvent, KvRankEvent } from "../core/replica/events";
import { CodecError } from "./codec-error";
import { readMap, requireKeys } from "./map-fields";
import type { MsgpackReader } from "./msgpack-reader";
import type { MsgpackWriter } from "./msgpack-writer";

const TIERS: readonly StorageTier[] = ["device", "host_pinned", "disk", "external"];

export type KvEventsData = Omit<KvEventsEvent, "ts" | "origin" | "workerId" | "dpRank">;
export type KvRankData = Omit<KvRankEvent, "ts" | "origin" | "workerId" | "dpRank">;

export function writeKv(w: MsgpackWriter, e: KvEventsEvent | KvRankEvent): void {
  w.str("data");
  w.mapHeader(1);
  w.str(e.type === "kv_events" ? "KvEvents" : "KvRank");
  w.mapHeader(6);
  writeEpoch(w, e.epoch);
  if (e.type === "kv_events") {
    w.str("first_seq");
    w.uint(e.firstSeq, "firstSeq");
    w.str("count");
    w.uint(e.count, "count");
  } else {
    w.str("next_seq");
    w.uint(e.nextSeq, "nextSeq");
    w.str("part");
    w.uint(e.part, "part");
  }
  w.str("changes");
  writeChanges(w, e.changes);
}

function writeEpoch(w: MsgpackWriter, epoch: KvEpoch): void {
  w.str("epoch");
  w.str(epoch.name);
  w.str("epoch_ts");
  w.uint(epoch.key.ts, "epoch.key.ts");
  w.str("epoch_origin");
  w.str(epoch.key.origin);
}

export function writeChanges(w: MsgpackWriter, changes: readonly KvChange[]): void {
  w.arrayHeader(changes.length);
  for (const c of changes) {
    if (c.kind === "stored") {
      w.arrayHeader(6);
      w.byte(0);
      w.byte(TIERS.indexOf(c.tier));
      w.uint(c.at, "at");
      if (c.parent === null) w.nil();
      else w.bigU64(c.parent, "parent");
      w.u64Array(c.engineHashes);
      w.u64Array(c.localHashes);
    } else if (c.kind === "removed") {
      w.arrayHeader(3);
      w.byte(1);
      w.byte(TIERS.indexOf(c.tier));
      w.u64Array(c.engineHashes);
    } else {
      w.arrayHeader(1);
      w.byte(2);
    }
  }
}

export function readKv(r: MsgpackReader, variant: "KvEvents" | "KvRank"): KvEventsData | KvRankData {
  let name = "";
  let ts = 0;
  let origin = "";
  let a = 0;
  let b = 0;
  let changes: KvChange[] = [];
  const [first, second] = variant === "KvEvents" ? ["first_seq", "count"] : ["next_seq", "part"];
  const seen = readMap(r, variant, (key) => {
    switch (key) {
      case "epoch":
        name = r.str("epoch");
        return 1;
      case "epoch_ts":
        ts = r.uint("epoch_ts");
        return 2;
      case "epoch_origin":
        origin = r.key("epoch_origin");
        return 4;
      case first:
        a = r.uint(first);
        return 8;
      case second:
        b = r.uint(second);
        return 16;
      case "changes":
        changes = readChanges(r);
        return 32;
      default:
        return 0;
    }
  });
  requireKeys(variant, seen, 63, `epoch, epoch_ts, epoch_origin, ${first}, ${second}, changes`);
  const epoch: KvEpoch = { name, key: { ts, origin } };
  return variant === "KvEvents"
    ? { type: "kv_events", epoch, firstSeq: a, count: b, changes }
    : { type: "kv_rank", epoch, nextSeq: a, part: b, changes };
}

export function readChanges(r: MsgpackReader): KvChange[] {
  const n = r.arrayHeader("changes");
  r.need(n, "changes");
  const changes: KvChange[] = [];
  for (let i = 0; i < n; i++) {
    const at = r.pos;
    const size = r.arrayHeader("change");
    const kind = r.uint("change.kind", 2);
    if (kind === 0 && size === 6) {
      const tier = tierOf(r);
      const time = r.uint("change.at");
      const parent = r.nil() ? null : r.bigU64("change.parent");
      const engineHashes = r.hashes("change.engine_hashes");
      const localHashes = r.hashes("change.local_hashes");
      if (localHashes.length !== engineHashes.length) {
        throw new CodecError("event-codec: a stored change's hash arrays differ in length");
      }
      changes.push({ kind: "stored", tier, engineHashes, parent, localHashes, at: time });
    } else if (kind === 1 && size === 3) {
      const tier = tierOf(r);
      changes.push({ kind: "removed", tier, engineHashes: r.hashes("change.engine_hashes") });
    } else if (kind === 2 && size === 1) changes.push({ kind: "cleared" });
    else r.fail("change", "[0, …6 fields] | [1, …3] | [2]", at);
  }
  return changes;
}

function tierOf(r: MsgpackReader): StorageTier {
  const at = r.pos;
  const tier = TIERS[r.uint("change.tier", TIERS.length - 1)];
  return tier ?? r.fail("change.tier", "a tier index", at);
}
