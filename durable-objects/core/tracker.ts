import type { KvEventsAck, KvEventsInput } from "../kv-event-types";
import { MAX_HASHES_PER_CALL } from "../limits";
import type { AddInput, Failure, PotentialLoad, RankLoad, RegisterInput, Result, WorkerInfo } from "../types";
import { buildRecord, patchRecord } from "./catalog/build-record";
import { judgeCatalog, reconcilePartition } from "./catalog/catalog-book";
import { catalogText } from "./catalog/catalog-messages";
import {
  CATALOG_CONFIG,
  type CatalogFields,
  type CatalogRecord,
  type WorkerPatch,
  type WorkerUpsert,
} from "./catalog/catalog-record";
import { catalogRecordOf, catalogRecords, removeRecord, writeRecord } from "./catalog/catalog-writes";
import { retireIncarnation, supersedes } from "./incarnation";
import { acceptKvEvents, type KvGap } from "./kv-events/kv-intake";
import type { LeaseInfo } from "./lease/lease-book";
import { admitOwned, endLease, renewLease } from "./lease/lease-calls";
import { fail, text } from "./messages";
import type { AddEvent } from "./replica/events";
import { TrackerState } from "./tracker-state";

export type { SessionReplica, TrackerLimits, TrackerOptions } from "./tracker-state";

const U32_MAX = 2 ** 32 - 1;
/** The answer of every accepted lifecycle call: one frozen object instead of an allocation per call. */
const OK: Result = Object.freeze({ ok: true as const });

/**
 * The slot tracker of one (model, tenant): Dynamo's `ActiveSequencesMultiWorker` behind the
 * standalone registry's admission rules (reference §1–§4), with the clock passed in (`now`, epoch
 * ms). A tracker exists from its first registered worker, which fixes its block size, until its last
 * worker leaves. Every call first expires what is due at `now`. Each accepted change gets a key from
 * the hybrid clock; a replicated tracker emits it, and merges other replicas' changes with
 * `applyReplicaEvent` (`replica-merge.ts`).
 */
export class Tracker extends TrackerState {
  register(input: RegisterInput, now: number): Result<{ created: boolean }> {
    this.expire(now);
    const { workerId, blockSize, dpStart, dpSize } = input;
    if (blockSize === 0) return fail("invalid_block_size", text.invalidBlockSize());
    if (dpSize === 0) return fail("invalid_dp_size", text.invalidDpSize());
    if (dpStart + dpSize > U32_MAX) return fail("invalid_dp_range", text.invalidDpRange(dpStart, dpSize));
    const created = !this.exists;
    if (!created && blockSize !== this.blockSize) {
      return fail(
        "block_size_mismatch",
        text.blockSizeMismatch(this.model, this.tenant, this.blockSize!, blockSize),
      );
    }
    // A catalog record stands for its worker in the slot tracker too, and changes through the
    // catalog only, a later incarnation included (`slot-tracker-meeting.ts`).
    const held = this.book.workers.get(workerId);
    const replaced =
      held && !this.catalog.entries.has(workerId) && supersedes(input, held.input) ? held : undefined;
    if ((held && !replaced) || this.catalog.entries.has(workerId)) {
      return fail("duplicate_worker", text.duplicateWorker(workerId, this.model, this.tenant));
    }
    if (!replaced && this.book.workers.size >= this.limits.maxWorkers) {
      return fail(
        "limit_exceeded",
        `worker limit reached: at most ${this.limits.maxWorkers} workers per tracker`,
      );
    }
    if (this.book.rankCount - (replaced?.dpSize ?? 0) + dpSize > this.limits.maxRanks) {
      return fail(
        "limit_exceeded",
        `rank limit reached: at most ${this.limits.maxRanks} data-parallel ranks per tracker (dp_size=${dpSize})`,
      );
    }
    const key = this.stamp(now);
    // A later incarnation takes the worker's place in this one step (`incarnation.ts`).
    if (replaced) retireIncarnation(this, replaced, now);
    this.registerWorker({ ...key, type: "register", ...input });
    if (this.replicated) {
      // This registration is newer than anything seen: older records of the worker are void.
      this.records.clearGone(workerId);
      this.records.clearExcluded(workerId);
      for (const orphan of this.records.orphansOf(workerId)) this.records.retireOrphan(orphan);
    }
    // A fix for the partition may let incomplete catalog records of its block size in.
    reconcilePartition(this);
    this.emit({ ...key, type: "register", ...input });
    return { ok: true, created };
  }

  unregister(workerId: bigint, now: number): Result<{ deleted: boolean }> {
    this.expire(now);
    const worker = this.book.workers.get(workerId);
    if (!worker) return fail("worker_not_found", text.workerNotFound(workerId, this.model, this.tenant));
    if (this.catalog.entries.has(workerId)) {
      // A catalog worker leaves the catalog too, as one change (`catalog_remove`).
      const removed = removeRecord(this, workerId, now);
      return removed.ok ? { ok: true, deleted: !this.exists } : removed;
    }
    const key = this.stamp(now);
    // Dynamo drops the worker's requests silently (reference §2.1); replicas drop them on this event.
    const dropped = this.removeWorker(worker, now);
    if (this.replicated) {
      for (const req of dropped) this.remember(req);
      this.records.setGone(workerId, key);
      for (const orphan of this.records.orphansOf(workerId)) this.records.retireOrphan(orphan);
    }
    // The oldest registered worker may have been this one: another block size may now decide.
    reconcilePartition(this);
    this.emit({ ...key, type: "unregister", workerId });
    return { ok: true, deleted: !this.exists };
  }

  add(input: AddInput, now: number): Result {
    this.expire(now);
    if (!this.exists) return fail("tracker_not_found", text.trackerNotFound(this.model, this.tenant));
    const slot = this.book.slotOf(input.workerId, input.dpRank);
    if (!slot) return fail("rank_not_found", text.rankNotFound(input.workerId, input.dpRank));
    const existing = this.book.requests.get(input.requestId);
    if (existing) {
      return fail(
        "duplicate_request",
        text.duplicateRequest(input.requestId, existing.slot.workerId, existing.slot.dpRank),
      );
    }
    if (input.hashes.length > MAX_HASHES_PER_CALL) {
      return fail(
        "too_large",
        `sequence_hashes has ${input.hashes.length} hashes; at most ${MAX_HASHES_PER_CALL}`,
      );
    }
    if (this.book.requests.size >= this.limits.maxLiveRequests) {
      return fail(
        "limit_exceeded",
        `live request limit reached: at most ${this.limits.maxLiveRequests} live requests per tracker`,
      );
    }
    if (this.book.liveBlocks + input.hashes.length > this.limits.maxLiveBlocks) {
      return fail(
        "limit_exceeded",
        `live block budget reached: live requests may hold at most ${this.limits.maxLiveBlocks} prompt blocks per tracker (${this.book.liveBlocks} held, this request has ${input.hashes.length})`,
      );
    }
    let booking = input;
    let deadline = now + this.expiryMs;
    if (input.owner !== undefined) {
      // Owned: refused without a live lease; kept while it lives, up to the owned age guard.
      const owned = admitOwned(this, this.limits, input.owner, now);
      if (!owned.ok) return owned;
      booking = { ...input, grant: owned.grant };
      deadline = now + this.ownedMaxAgeMs;
    }
    const key = this.stamp(now);
    if (!this.replicated) {
      // Nothing ships or remembers this add, so it needs no event: one object of 13 fields fewer
      // per add (V8 keeps it on the heap), a third of what a lifecycle cycle allocated.
      this.bookRequest(booking, key, now, deadline);
      return OK;
    }
    // Spelled out: a spread of the key and then of `input` takes V8's generic runtime path, about
    // 15 µs an event on the benchmark machine, more than the rest of an add (`npm run bench`).
    const event: AddEvent = {
      ts: key.ts,
      origin: key.origin,
      type: "add",
      requestId: input.requestId,
      workerId: input.workerId,
      dpRank: input.dpRank,
      hashes: input.hashes,
      newIslTokens: input.newIslTokens,
      expectedOutputTokens: input.expectedOutputTokens,
      expectedPrefillDurationMs: input.expectedPrefillDurationMs,
      startedAt: now,
      deadline,
    };
    if (input.cachePrompt !== undefined) event.cachePrompt = input.cachePrompt;
    if (booking.owner !== undefined) {
      event.owner = booking.owner;
      event.grant = booking.grant;
    }
    this.bookRequest(event, event, now, deadline);
    // Older records of this id lose to this add; its own key lives with the booking until it leaves.
    this.records.clearFreed(input.requestId);
    this.records.clearMark(input.requestId);
    this.records.clearOrphan(input.requestId);
    this.departures?.record(event, now);
    this.emit(event);
    return OK;
  }

  prefillComplete(requestId: string, now: number): Result {
    this.expire(now);
    if (!this.exists) return fail("tracker_not_found", text.trackerNotFound(this.model, this.tenant));
    const req = this.book.requests.get(requestId);
    if (!req) return fail("request_not_found", text.requestNotFound(requestId));
    // A repeat changes nothing and is not shipped again.
    if (req.inPrefill) {
      const key = this.stamp(now);
      this.completePrefill(req, now, key);
      if (this.replicated) {
        const event = { ts: key.ts, origin: key.origin, type: "prefill_complete" as const, requestId };
        this.departures?.record(event, now);
        this.emit(event);
      }
    }
    return OK;
  }

  free(requestId: string, now: number): Result {
    this.expire(now);
    if (!this.exists) return fail("tracker_not_found", text.trackerNotFound(this.model, this.tenant));
    const key = this.stamp(now);
    const req = this.book.requests.get(requestId);
    // This free is newer than everything seen here, so nothing of the booking needs remembering.
    if (req) this.dropRequest(req, now);
    if (this.replicated) {
      // Shipped and remembered even for an id unknown here: its add may be on its way from a peer.
      this.records.setFreed(requestId, key);
      this.records.clearOrphan(requestId);
      this.records.clearMark(requestId);
      const event = { ts: key.ts, origin: key.origin, type: "free" as const, requestId };
      this.departures?.record(event, now);
      this.emit(event);
    }
    return OK;
  }

  /** `POST /leases`: creates or renews `owner`'s lease for `ttlMs` (SPEC §8). */
  renewLease(owner: string, ttlMs: number, now: number): Result<{ owner: string; expiresAtMs: number }> {
    this.expire(now);
    return renewLease(this, this.limits, owner, ttlMs, now);
  }

  /** `DELETE /leases/{owner}`: ends the lease at once; its bookings are freed now. */
  endLease(owner: string, now: number): Result<{ freed: number }> {
    this.expire(now);
    return endLease(this, owner, now);
  }

  /**
   * Why `owner` may not book now (no live lease, or its booking cap reached), or undefined: for
   * callers that must refuse an owned booking before they change anything else (`/route`'s turn).
   */
  ownerRefusal(owner: string, now: number): Failure | undefined {
    const admitted = admitOwned(this, this.limits, owner, now);
    return admitted.ok ? undefined : admitted;
  }

  /** `GET /leases`: live leases with their booking counts, by owner. */
  listLeases(now: number): LeaseInfo[] {
    this.expire(now);
    return this.leases.list(now);
  }

  /** `POST /selection/workers`: the worker's record replaced whole (reference selection §7). */
  upsertCatalog(input: WorkerUpsert, now: number): Result<{ record: CatalogRecord }> {
    this.expire(now);
    const built = buildRecord(input, { config: CATALOG_CONFIG, fix: undefined });
    return built.ok ? writeRecord(this, fieldsOf(built.record), now, this.limits) : built;
  }

  /** `PATCH /selection/workers/{id}`: the given fields over the listed record, judged afresh. */
  patchCatalog(workerId: bigint, patch: WorkerPatch, now: number): Result<{ record: CatalogRecord }> {
    this.expire(now);
    const previous = catalogRecordOf(this, workerId);
    if (!previous) return fail("worker_not_found", catalogText.workerNotFound(workerId));
    const built = patchRecord(previous, patch, { config: CATALOG_CONFIG, fix: undefined });
    return built.ok ? writeRecord(this, fieldsOf(built.record), now, this.limits) : built;
  }

  /** `DELETE /selection/workers/{id}`: answers the final (`unschedulable`) record. */
  removeCatalog(workerId: bigint, now: number): Result<{ record: CatalogRecord; deleted: boolean }> {
    this.expire(now);
    const removed = removeRecord(this, workerId, now);
    return removed.ok ? { ok: true, record: removed.deletion.final, deleted: !this.exists } : removed;
  }

  /** Once storage is read back (records and replication state): judges the catalog's records. */
  restored(): void {
    judgeCatalog(this);
  }

  listCatalog(now: number): CatalogRecord[] {
    this.expire(now);
    return catalogRecords(this);
  }

  listWorkers(now: number): WorkerInfo[] {
    this.expire(now);
    return this.book.listWorkers();
  }

  listLoads(now: number): RankLoad[] {
    this.expire(now);
    return this.book.listLoads(now);
  }

  /**
   * How many leading blocks of `hashes` each rank's live requests hold, by slot id
   * (`Book.overlapDepths`), after expiry; null where `potentialLoads` would refuse (no tracker).
   */
  liveOverlapDepths(hashes: BigUint64Array, now: number): Int32Array | null {
    this.expire(now);
    return this.exists ? this.book.overlapDepths(hashes) : null;
  }

  potentialLoads(
    hashes: BigUint64Array,
    newIslTokens: number,
    now: number,
  ): Result<{ loads: PotentialLoad[] }> {
    this.expire(now);
    if (!this.exists) return fail("tracker_not_found", text.trackerNotFound(this.model, this.tenant));
    return { ok: true, loads: this.book.potentialLoads(hashes, newIslTokens, now) };
  }

  /** `POST /kv_events`: one rank's engine batches, in sequence (`kv-events/kv-intake.ts`). */
  kvEvents(input: KvEventsInput, now: number): Result<KvEventsAck> | KvGap {
    return acceptKvEvents(this, input, now);
  }
}

function fieldsOf(record: CatalogRecord): CatalogFields {
  const { lifecycle: _lifecycle, notSchedulableReasons: _reasons, ...fields } = record;
  return fields;
}
