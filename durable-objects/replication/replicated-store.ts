import type { EventKey } from "../core/replica/clock";
import type {
  AddEvent,
  CatalogUpsertEvent,
  RegisterEvent,
  ReplicaEvent,
  TimelineEvent,
} from "../core/replica/events";
import type { LeaseState } from "../core/lease/lease-table";
import type { KvChange, KvStoredChange, KvStream } from "../core/kv-events/kv-stream";
import type { LiveRequest } from "../core/live-request";
import type { RecordKind, TrackerStore } from "../core/store";
import type { SqlTrackerStore } from "../storage/sql-tracker-store";
import type { AddInput, RegisterInput } from "../types";
import type { SqlReplicaStore } from "./sql-replica-store";

/**
 * The write-through port of a replicated tracker: the tracker's own rows go to the tracker tables,
 * replication records to the replication tables, and each emitted event to `onEmitted` (the
 * replicator, which appends it to the outbox), all in the same synchronous step as the change.
 */
export class ReplicatedStore implements TrackerStore {
  onEmitted: (event: ReplicaEvent) => void = () => {};

  constructor(
    private readonly base: SqlTrackerStore,
    private readonly replica: SqlReplicaStore,
  ) {}

  workerAdded(input: RegisterInput, key: EventKey): void {
    this.base.workerAdded(input, key);
  }

  workerRemoved(workerId: bigint): void {
    this.base.workerRemoved(workerId);
  }

  requestAdded(req: LiveRequest, input: AddInput): void {
    this.base.requestAdded(req, input);
  }

  prefillCompleted(req: LiveRequest): void {
    this.base.prefillCompleted(req);
  }

  anchorMoved(req: LiveRequest, at: number): void {
    this.base.anchorMoved(req, at);
  }

  requestRemoved(req: LiveRequest): void {
    this.base.requestRemoved(req);
  }

  trackerDeleted(): void {
    this.base.trackerDeleted();
  }

  workerReshaped(input: RegisterInput, key: EventKey): void {
    this.base.workerReshaped(input, key);
  }

  catalogSet(upsert: CatalogUpsertEvent): void {
    this.base.catalogSet(upsert);
  }

  catalogCleared(workerId: bigint): void {
    this.base.catalogCleared(workerId);
  }

  leaseSet(lease: LeaseState): void {
    this.base.leaseSet(lease);
  }

  leaseCleared(owner: string): void {
    this.base.leaseCleared(owner);
  }

  emitted(event: ReplicaEvent): void {
    this.onEmitted(event);
  }

  recordSet(kind: RecordKind, id: string, key: EventKey): void {
    this.replica.recordSet(kind, id, key);
  }

  recordCleared(kind: RecordKind, id: string, key: EventKey): void {
    this.replica.recordCleared(kind, id, key);
  }

  recordsPurged(beforeMs: number): void {
    this.replica.recordsPurged(beforeMs);
  }

  orphanSet(event: AddEvent): void {
    this.replica.held("orphan", event.requestId, event);
  }

  orphanCleared(requestId: string): void {
    this.replica.released("orphan", requestId);
  }

  excludedSet(event: RegisterEvent): void {
    this.replica.held("excluded", String(event.workerId), event);
  }

  excludedCleared(workerId: bigint): void {
    this.replica.released("excluded", String(workerId));
  }

  timelineSet(event: TimelineEvent): void {
    this.replica.timelineSet(event);
  }

  timelinePurged(beforeTs: number): void {
    this.replica.timelinePurged(beforeTs);
  }

  kvStreamSet(stream: KvStream): void {
    this.base.kvStreamSet(stream);
  }

  kvStreamCleared(workerId: bigint, dpRank: number): void {
    this.base.kvStreamCleared(workerId, dpRank);
  }

  kvApplied(workerId: bigint, dpRank: number, changes: readonly KvChange[]): void {
    this.base.kvApplied(workerId, dpRank, changes);
  }

  kvCheckpointed(workerId: bigint, dpRank: number, runs: readonly Omit<KvStoredChange, "kind">[]): void {
    this.base.kvCheckpointed(workerId, dpRank, runs);
  }

  kvRankCleared(workerId: bigint, dpRank: number): void {
    this.base.kvRankCleared(workerId, dpRank);
  }

  kvWorkerCleared(workerId: bigint): void {
    this.base.kvWorkerCleared(workerId);
  }
}
