import { DurableObject } from "cloudflare:workers";
import { applyBatch } from "./batch";
import type { RouterEvent } from "./core/cache-index/cache-index";
import { seededRng, systemRng } from "./core/routing/rng";
import { type RoutingState, routeRequest, routingStatsOf } from "./core/routing/route-request";
import type { LeaseInfo } from "./core/lease/lease-book";
import type { KvGap } from "./core/kv-events/kv-intake";
import type { TrackerStore } from "./core/store";
import type { KvEventsAck, KvEventsInput, KvStreamInfo } from "./kv-event-types";
import { Tracker } from "./core/tracker";
import type { CatalogRecord, WorkerPatch, WorkerUpsert } from "./core/catalog/catalog-record";
import { CatalogLink } from "./directory/catalog-link";
import { DirectoryLink } from "./directory/directory-link";
import type { DirectoryObject } from "./directory/directory-object";
import {
  expirySecondsOf,
  type LimitsEnv,
  ownedMaxAgeSecondsOf,
  positiveOr,
  trackerLimitsOf,
} from "./env-limits";
import { OpCounters } from "./metrics/metrics-counters";
import { metricsReport } from "./metrics/metrics-report";
import type { PeerStatus, TrackerMetrics, TrackerOp } from "./metrics/metrics-types";
import { directoryName, locationHintOf, parseReplicas, parseTrackerName, trackerName } from "./naming";
import { PeerSync } from "./replication/peer-sync";
import { ReplicatedStore } from "./replication/replicated-store";
import { SqlReplicaStore } from "./replication/sql-replica-store";
import type { BatchReply } from "./replication/types";
import { type RouterEnv, routerSettingsOf } from "./router-settings";
import type { TrackerRpc } from "./rpc";
import { SelectionHost } from "./selection-host";
import type {
  OverlapScores,
  PromptQuery,
  ReservationInput,
  ReservationOutcome,
  SelectInput,
  SelectionLoad,
  SelectOutcome,
} from "./selection-types";
import { storedName } from "./storage/identity";
import { openRouting } from "./storage/sql-affinity-store";
import { SqlTrackerStore } from "./storage/sql-tracker-store";
import type {
  AddInput,
  BatchOp,
  BatchOpResult,
  PotentialLoad,
  RankLoad,
  RegisterInput,
  Result,
  RouteInput,
  RouteOutcome,
  RoutingStats,
  TrackerKey,
  WorkerInfo,
} from "./types";

export interface TrackerEnv extends LimitsEnv, RouterEnv {
  REQUEST_EXPIRY_SECONDS?: string;
  /** Age guard of owned bookings while their lease lives, seconds (default 3,600; SPEC §8). */
  OWNED_REQUEST_MAX_AGE_SECONDS?: string;
  /** Comma-separated replica names; the others are this object's peers. */
  REPLICAS?: string;
  /** Seconds a `/selection/select` with a `selection_id` stays pending (default 120). */
  SELECTION_CACHE_TTL_SECS?: string;
  /** Pending selections per tracker object (default 4,096). */
  SELECTION_CACHE_MAX_ENTRIES?: string;
  /** Delay from a change to its shipping to peers, ms (default 10). */
  REPLICA_FLUSH_MS?: string;
  /** Unacknowledged events per peer before it is resynced by snapshot (default 100,000). */
  REPLICA_OUTBOX_CAP?: string;
  DIRECTORY: DurableObjectNamespace<DirectoryObject>;
  TRACKER: DurableObjectNamespace<TrackerObject>;
}

const DEFAULT_FLUSH_MS = 10;
const DEFAULT_OUTBOX_CAP = 100_000;

/**
 * One slot tracker: a (model, tenant) in one replica, named by `trackerName`. A thin shell around
 * the pure {@link Tracker}: it hydrates memory from SQLite once, in the constructor, serves reads
 * from memory, writes every change through before answering, and keeps one alarm at the earliest
 * due time (next expiry, or a pending directory update).
 */
export class TrackerObject extends DurableObject<TrackerEnv> implements TrackerRpc {
  private readonly key: TrackerKey;
  private readonly store: SqlTrackerStore;
  /** Replication storage (outbox, records); absent with one replica. */
  private readonly replicaStore: SqlReplicaStore | null;
  private readonly tracker: Tracker;
  /** Replication with the same tracker in the other replicas; absent with one replica. */
  private readonly sync: PeerSync | null = null;
  /** `/route`'s session bindings (durable), round-robin turns and conflict counts. */
  private readonly routing: RoutingState;
  /** The alarm time currently set, epoch ms (null: none). */
  private armedAt: number | null = null;
  /** This replica's directory, told when the tracker gains its first worker or loses its last. */
  private readonly directory: DirectoryLink;
  /** This replica's directory, told the worker ids the catalog lists whenever they change. */
  private readonly catalogLink: CatalogLink;
  /** Calls by operation and outcome since this instance started (memory only: see `metrics-counters.ts`). */
  private readonly ops = new OpCounters();
  /** The selection API's calls on this tracker, and its pending selections. */
  private readonly selection: SelectionHost;
  private readonly startedAt = Date.now();

  constructor(ctx: DurableObjectState, env: TrackerEnv) {
    super(ctx, env);
    const name = ctx.id.name ?? storedName(ctx.storage.sql) ?? "";
    this.key = parseTrackerName(name) ?? { replica: "", model: "", tenant: "" };
    this.store = new SqlTrackerStore(ctx.storage.sql, name);
    this.directory = new DirectoryLink(
      () => env.DIRECTORY.getByName(directoryName(this.key.replica)),
      this.key.model,
      this.key.tenant,
      (present) => this.store.setDirectoryOwed(present),
    );
    this.catalogLink = new CatalogLink(
      () => env.DIRECTORY.getByName(directoryName(this.key.replica)),
      this.key.model,
      this.key.tenant,
      (owed) => this.store.setCatalogOwed(owed),
    );
    const peers = parseReplicas(env.REPLICAS).filter((replica) => replica !== this.key.replica);
    const replicaStore = peers.length > 0 ? new SqlReplicaStore(ctx.storage.sql, name) : null;
    this.replicaStore = replicaStore;
    const replicated = replicaStore ? new ReplicatedStore(this.store, replicaStore) : null;
    const store: TrackerStore = replicated ?? this.store;
    this.tracker = new Tracker({
      model: this.key.model,
      tenant: this.key.tenant,
      expiryMs: expirySecondsOf(env) * 1000,
      ownedMaxAgeMs: ownedMaxAgeSecondsOf(env) * 1000,
      store,
      origin: this.key.replica,
      replicated: replicated !== null,
      limits: trackerLimitsOf(env),
      // Dynamo's TTL may be 0 (nothing stays); the index needs a positive one, and 1 ms keeps nothing.
      cacheTtlMs: Math.max(1, routerSettingsOf(env).config.routerTtlSecs * 1000),
    });
    if (replicated && replicaStore) {
      this.sync = new PeerSync({
        origin: this.key.replica,
        peers,
        tracker: this.tracker,
        store: replicated,
        replicaStore,
        stubOf: (peer) =>
          env.TRACKER.getByName(trackerName({ ...this.key, replica: peer }), {
            locationHint: locationHintOf(peer),
          }),
        flushMs: positiveOr(env.REPLICA_FLUSH_MS, DEFAULT_FLUSH_MS),
        maxBacklog: positiveOr(env.REPLICA_OUTBOX_CAP, DEFAULT_OUTBOX_CAP),
      });
    }
    this.selection = new SelectionHost(this.tracker, routerSettingsOf(env), {
      ttlMs: positiveOr(env.SELECTION_CACHE_TTL_SECS, 120) * 1000,
      maxEntries: Math.floor(positiveOr(env.SELECTION_CACHE_MAX_ENTRIES, 4_096)),
    });
    this.routing = openRouting(ctx.storage.sql, Date.now());
    // Session bindings replicate with the tracker: merged from peers, stamped and shipped when made here.
    this.tracker.sessions = this.routing.affinity;
    if (this.sync) {
      this.routing.affinity.replication = {
        stamp: (now) => this.tracker.stamp(now),
        emit: (event) => this.tracker.emitExternal(event),
      };
    }
    void ctx.blockConcurrencyWhile(async () => {
      this.store.hydrate(this.tracker);
      this.sync?.hydrate(Date.now());
      this.tracker.restored();
      this.directory.owed = this.store.directoryOwed();
      this.catalogLink.restore(this.tracker, this.store.catalogOwed());
      this.armedAt = await ctx.storage.getAlarm();
      // A restart may find expiry already due, or an alarm lost in a reset: re-arm from storage.
      await this.afterChange();
    });
  }

  async register(input: RegisterInput): Promise<Result> {
    const result = this.tracker.register(input, Date.now());
    if (result.ok && result.created) await this.directory.update(true);
    await this.catalogLink.update(this.tracker);
    return this.finish(result, "register");
  }

  async unregister(workerId: bigint): Promise<Result> {
    const result = this.tracker.unregister(workerId, Date.now());
    if (result.ok && result.deleted) await this.lastWorkerLeft();
    await this.catalogLink.update(this.tracker);
    return this.finish(result, "unregister");
  }

  /** The last worker left the book: the tracker's state goes, and the directory is told. */
  private async lastWorkerLeft(): Promise<void> {
    // A catalog with incomplete records outlives the slot tracker, and so does a live lease (a
    // frontend's lease may precede every worker): their rows stay. A lapsed one alone judges nothing.
    if (!this.sync && this.tracker.catalog.size === 0 && this.tracker.leases.liveCount(Date.now()) === 0) {
      // The last worker left: the tracker and everything it stored are gone, alarm included.
      await this.ctx.storage.deleteAll();
      await this.ctx.storage.deleteAlarm();
      this.store.forgetSchema();
      this.armedAt = null;
    }
    // With peers, the replication outbox, stream positions and unregistrations must outlive the
    // tracker's own rows (already deleted): peers still need this event, and late ones must merge.
    this.routing.affinity.clear();
    await this.directory.update(false);
  }

  async catalogUpsert(input: WorkerUpsert): Promise<Result<{ record: CatalogRecord }>> {
    return this.catalogWrite(() => this.tracker.upsertCatalog(input, Date.now()));
  }

  async catalogPatch(workerId: bigint, patch: WorkerPatch): Promise<Result<{ record: CatalogRecord }>> {
    return this.catalogWrite(() => this.tracker.patchCatalog(workerId, patch, Date.now()));
  }

  async catalogDelete(workerId: bigint): Promise<Result<{ record: CatalogRecord }>> {
    return this.catalogWrite(() => this.tracker.removeCatalog(workerId, Date.now()));
  }

  async catalogList(): Promise<CatalogRecord[]> {
    return this.finish(this.tracker.listCatalog(Date.now()));
  }

  /** A catalog write, and what it changed for the directory: the slot tracker's existence, the ids. */
  private async catalogWrite<T extends object>(write: () => Result<T>): Promise<Result<T>> {
    const existed = this.tracker.exists;
    const result = write();
    const { exists, catalog } = this.tracker;
    // A removal that leaves nothing, book or catalog, lets the object's storage go too.
    if (result.ok && !exists && (existed || catalog.size === 0)) await this.lastWorkerLeft();
    else if (!existed && exists) await this.directory.update(true);
    await this.catalogLink.update(this.tracker);
    return this.finish(result);
  }

  async listWorkers(): Promise<WorkerInfo[]> {
    return this.finish(this.tracker.listWorkers(Date.now()), "workers");
  }

  async add(input: AddInput): Promise<Result> {
    return this.finish(this.tracker.add(input, Date.now()), "add");
  }

  /** `POST /leases`: creates or renews `owner`'s lease; `ttlMs` is range-checked by the Worker. */
  async renewLease(owner: string, ttlMs: number): Promise<Result<{ owner: string; expiresAtMs: number }>> {
    return this.finish(this.tracker.renewLease(owner, ttlMs, Date.now()), "lease");
  }

  /** `DELETE /leases/{owner}`: ends the lease; its bookings are freed before the answer. */
  async endLease(owner: string): Promise<Result<{ freed: number }>> {
    return this.finish(
      this.grouped(() => this.tracker.endLease(owner, Date.now())),
      "lease_end",
    );
  }

  async listLeases(): Promise<LeaseInfo[]> {
    return this.finish(this.tracker.listLeases(Date.now()));
  }

  async prefillComplete(requestId: string): Promise<Result> {
    return this.finish(this.tracker.prefillComplete(requestId, Date.now()), "prefill_complete");
  }

  async free(requestId: string): Promise<Result> {
    return this.finish(this.tracker.free(requestId, Date.now()), "free");
  }

  async batch(ops: BatchOp[]): Promise<Result<{ results: BatchOpResult[] }>> {
    const now = Date.now();
    return this.finish(
      this.grouped(() => applyBatch(this.tracker, ops, now, (op, result) => this.ops.record(op, result))),
    );
  }

  async listLoads(): Promise<RankLoad[]> {
    return this.finish(this.tracker.listLoads(Date.now()), "loads");
  }

  async potentialLoads(
    hashes: BigUint64Array,
    newIslTokens: number,
  ): Promise<Result<{ loads: PotentialLoad[] }>> {
    return this.finish(this.tracker.potentialLoads(hashes, newIslTokens, Date.now()), "potential_loads");
  }

  /** Chooses and books in one synchronous step: no other call can read the loads in between. */
  async route(input: RouteInput): Promise<Result<RouteOutcome>> {
    const rng = input.seed === undefined ? systemRng : seededRng(input.seed);
    return this.finish(routeRequest(this.tracker, this.routing, input, Date.now(), rng), "route");
  }

  /** `/selection/select` and `/selection/select_and_reserve` (chosen and booked in one synchronous step). */
  async select(input: SelectInput): Promise<Result<SelectOutcome>> {
    const op = input.mode === "book" ? "select_and_reserve" : "select";
    return this.finish(this.selection.select(input, Date.now()), op);
  }

  async reserve(input: ReservationInput): Promise<Result<ReservationOutcome>> {
    return this.finish(this.selection.reserve(input, Date.now()), "reservations");
  }

  async hasReservation(id: string): Promise<boolean> {
    return this.finish(this.selection.has(id, Date.now()));
  }

  async reservationPrefillComplete(id: string): Promise<Result> {
    return this.finish(this.selection.prefillComplete(id, Date.now()));
  }

  async reservationOutputBlock(id: string, decayFraction?: number): Promise<Result> {
    return this.finish(this.selection.outputBlock(id, decayFraction, Date.now()));
  }

  async endReservation(id: string): Promise<Result> {
    return this.finish(this.selection.end(id, Date.now()));
  }

  async selectionLoads(): Promise<SelectionLoad[] | null> {
    return this.finish(this.selection.loads(Date.now()));
  }

  async selectionPotentialLoads(query: PromptQuery): Promise<Result<{ loads: SelectionLoad[] }>> {
    return this.finish(this.selection.potentialLoads(query, Date.now()));
  }

  async overlapScores(query: PromptQuery): Promise<Result<OverlapScores>> {
    return this.finish(this.selection.overlapScores(query, Date.now()));
  }

  async kvEvents(input: KvEventsInput): Promise<Result<KvEventsAck> | KvGap> {
    return this.finish(this.tracker.kvEvents(input, Date.now()), "kv_events");
  }

  async kvStreams(): Promise<KvStreamInfo[]> {
    this.tracker.expire(Date.now());
    return this.finish(this.tracker.kv.list());
  }

  async cacheDump(): Promise<{ blockSize: number; events: RouterEvent[] } | null> {
    return this.finish(this.selection.dump(Date.now()));
  }

  async routingStats(): Promise<RoutingStats> {
    return this.finish(routingStatsOf(this.tracker, this.routing, Date.now()));
  }

  /** Applies a batch of a peer's changes (MessagePack, `event-codec.ts`); peers only, never HTTP. */
  async replicate(batch: Uint8Array): Promise<BatchReply> {
    if (!this.sync) throw new Error(`replica ${this.key.replica} has no peers configured (REPLICAS)`);
    const existed = this.tracker.exists;
    const sync = this.sync;
    const reply = this.grouped(() => sync.receive(batch, Date.now()));
    if (existed !== this.tracker.exists) await this.directory.update(this.tracker.exists);
    await this.catalogLink.update(this.tracker);
    return this.finish(reply);
  }

  /** Replication state towards each peer (empty with one replica). */
  async replicaStatus(): Promise<PeerStatus[]> {
    this.ops.record("peers", null);
    return this.sync?.status(Date.now()) ?? [];
  }

  async metrics(): Promise<TrackerMetrics> {
    const report = metricsReport(
      {
        tracker: this.tracker,
        routing: this.routing,
        sync: this.sync,
        ops: this.ops,
        startedAt: this.startedAt,
        rowsWritten: this.store.rowsWritten,
      },
      Date.now(),
    );
    return this.finish(report);
  }

  /** Rows SQLite reports written by this instance (write-cost figure for benchmarks and metrics). */
  async rowsWritten(): Promise<number> {
    return this.store.rowsWritten;
  }

  /** Runs everything due; safe to run twice (at-least-once delivery): it only acts on what is due now. */
  override async alarm(): Promise<void> {
    this.armedAt = null;
    this.tracker.expire(Date.now());
    if (this.directory.owed !== null) await this.directory.update(this.directory.owed);
    await this.catalogLink.update(this.tracker);
    if (this.sync) await this.sync.flush();
    await this.afterChange();
  }

  /**
   * Runs a call that changes many requests with its writes grouped: one journal row for its request
   * changes (`request-journal.ts`), and with replicas one outbox row for the events it emits, one
   * timeline row for the prefill timeline changes it keeps and one record log row for its tombstones
   * and marks, instead of a row each.
   */
  private grouped<T>(fn: () => T): T {
    const replicaStore = this.replicaStore;
    if (!replicaStore) return this.store.group(fn);
    return replicaStore.group(() => this.store.group(fn));
  }

  /** Re-arms the alarm after a call, and counts the call's outcome under `op` (if it is one of the API's). */
  private async finish<T>(value: T, op?: TrackerOp): Promise<T> {
    if (op !== undefined) this.ops.record(op, value);
    await this.afterChange();
    return value;
  }

  /** Points the alarm at the earliest due time; it is only ever moved earlier or re-set after firing. */
  private async afterChange(): Promise<void> {
    const deadline = this.tracker.nextDeadline();
    // Expiry is strict (`now > deadline`), so fire 1 ms after the deadline.
    let due = deadline === undefined ? null : deadline + 1;
    const retryAt = this.directory.retryAt(Date.now());
    if (retryAt !== null) due = due === null ? retryAt : Math.min(due, retryAt);
    const reportAt = this.catalogLink.retryAt(Date.now());
    if (reportAt !== null) due = due === null ? reportAt : Math.min(due, reportAt);
    const flushAt = this.sync?.dueAt() ?? null;
    if (flushAt !== null) due = due === null ? flushAt : Math.min(due, flushAt);
    const sweepAt = this.tracker.nextCacheSweep();
    if (sweepAt !== undefined) due = due === null ? sweepAt : Math.min(due, sweepAt);
    if (due === null || (this.armedAt !== null && this.armedAt <= due)) return;
    this.armedAt = due;
    await this.ctx.storage.setAlarm(due);
  }
}
