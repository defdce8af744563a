import { compareKeys, firstTsOf } from "../core/replica/clock";
import type { AddEvent, ReplicaEvent } from "../core/replica/events";
import { addEventOf } from "../core/replica/placement";
import type { KvChange } from "../core/kv-events/kv-stream";
import type { Tracker } from "../core/tracker";

/**
 * This replica's whole state as the events that rebuild it when merged: registered and set-aside
 * workers, catalog records (each its winning upsert, floors included), unregistrations and removals,
 * leases (each remembered cut and unclipped grant as its own `lease_cut` and `lease` event), live
 * and orphaned bookings (an owned one with its owner and grant) with their prefill completions,
 * frees and early marks, and the prefill timelines that anchors derive from
 * (`core/replica/departure-log.ts`): the adds that have left (without their prompts), frees and
 * completions of the last two expiry ages. It is what a peer that missed part of the stream merges
 * to catch up exactly. A generator, read page by page while the tracker keeps changing: merging is
 * idempotent and changes after the snapshot's start follow in the stream, so no page needs to be
 * frozen. A peer of a version without leases cannot decode the lease events (an unknown variant is
 * refused, as for every new kind of change): replicas are deployed to it before leases are used.
 */
export function* snapshotEvents(tracker: Tracker): Generator<ReplicaEvent> {
  const { book, records } = tracker;
  // A catalog worker's book entry follows from its record, which travels whole with its floors.
  for (const w of [...book.workers.values()]) {
    if (!tracker.catalog.entries.has(w.workerId)) yield { ...w.key, type: "register", ...w.input };
  }
  for (const entry of [...tracker.catalog.entries.values()]) yield entry.upsert;
  for (const e of [...records.excluded.values()]) yield e;
  for (const [workerId, key] of [...records.gone]) yield { ...key, type: "unregister", workerId };
  // Before the bookings, so that one a cut ended is ended on arrival rather than booked and freed.
  // Grants and cuts merge as sets, so these rebuild the lease exactly; their keys only move the
  // peer's clock, to no later than the moments they name.
  for (const lease of [...tracker.leases.all()]) {
    const { owner } = lease;
    const origin = tracker.origin;
    for (const at of [...lease.cuts]) yield { ts: firstTsOf(at), origin, type: "lease_cut", owner, at };
    for (const { at, deadline } of [...lease.steps]) {
      yield { ts: firstTsOf(at), origin, type: "lease", owner, at, deadline };
    }
  }
  for (const req of book.requests.values()) {
    const add: AddEvent = addEventOf(tracker, req);
    // Read before the add is yielded: by the next page, a merge may have set the request aside and
    // booked it again, leaving `req` dropped though its completion is still the one to ship.
    const done = tracker.prefillKeyOf(req);
    yield add;
    if (done) yield { ...done, type: "prefill_complete", requestId: req.id };
  }
  for (const orphan of [...records.orphans.values()]) yield orphan;
  for (const [requestId, key] of [...records.marks]) yield { ...key, type: "prefill_complete", requestId };
  for (const [requestId, key] of [...records.freed]) {
    // A live or orphaned add's own key travels as that add (possibly later in the stream): as a
    // free it would arrive first and keep the add out.
    const live = book.requests.get(requestId);
    if (live && compareKeys({ ts: live.addTs, origin: live.origin }, key) === 0) continue;
    const orphan = records.orphans.get(requestId);
    if (orphan && compareKeys(orphan, key) === 0) continue;
    yield { ...key, type: "free", requestId };
  }
  for (const event of tracker.departures?.shippable() ?? []) {
    if (event.type === "add" && shippedWhole(tracker, event)) continue;
    yield event;
  }
  if (tracker.sessions) yield* [...tracker.sessions.snapshot()];
  yield* kvRankEvents(tracker);
}

/** Blocks in one `kv_rank` part: a part's event stays near 200 KB, well under a batch's bytes. */
export const KV_RANK_PART_BLOCKS = 8_192;

/**
 * Each rank's cached blocks with its stream's position, in parts. A rank's holdings are read whole
 * when the generator reaches it (the index may change between pages), so its parts describe one
 * moment, the one part 0's position names.
 */
function* kvRankEvents(tracker: Tracker): Generator<ReplicaEvent> {
  const { kv } = tracker;
  for (const stream of [...kv.streams.values()]) {
    const { workerId, dpRank, epoch, nextSeq } = stream;
    const runs = [...kv.index.holdingsOf(workerId, dpRank)];
    // The epoch's key: it only moves the peer's clock to a time the peer will see anyway.
    const { ts, origin } = epoch.key;
    let part = 0;
    let changes: KvChange[] = [];
    let blocks = 0;
    const ship = (): ReplicaEvent => {
      const event: ReplicaEvent = {
        ts,
        origin,
        type: "kv_rank",
        workerId,
        dpRank,
        epoch,
        nextSeq,
        part,
        changes,
      };
      part++;
      changes = [];
      blocks = 0;
      return event;
    };
    for (const run of runs) {
      changes.push({ kind: "stored", ...run });
      blocks += run.engineHashes.length;
      if (blocks >= KV_RANK_PART_BLOCKS) yield ship();
    }
    if (part === 0 || changes.length > 0) yield ship();
  }
}

/** Whether an add is live or orphaned here, and so shipped with its prompt above. */
function shippedWhole(tracker: Tracker, add: AddEvent): boolean {
  const live = tracker.book.requests.get(add.requestId);
  if (live && live.addTs === add.ts && live.origin === add.origin) return true;
  const orphan = tracker.records.orphans.get(add.requestId);
  return orphan !== undefined && compareKeys(orphan, add) === 0;
}
