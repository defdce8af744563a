import type { AddInput, RegisterInput } from "../types";
import type { EventKey } from "./replica/clock";
import type {
  AddEvent,
  CatalogUpsertEvent,
  RegisterEvent,
  ReplicaEvent,
  TimelineEvent,
} from "./replica/events";
import type { LeaseState } from "./lease/lease-table";
import type { KvChange, KvStoredChange, KvStream } from "./kv-events/kv-stream";
import type { LiveRequest } from "./live-request";

/** Kinds of replication record kept by key: a free, an early prefill mark, an unregistration. */
export type RecordKind = "free" | "prefill" | "gone";

/**
 * The tracker's write-through port. The tracker calls it synchronously inside each mutation, after
 * its memory changed and before the call returns, so an object can persist the change in the same
 * synchronous step (and therefore before its response leaves). Tests run the tracker without one.
 * The optional hooks serve replication and are called only by a replicated tracker.
 */
export interface TrackerStore {
  workerAdded(input: RegisterInput, key: EventKey): void;
  /** A worker left; its live requests left with it. */
  workerRemoved(workerId: bigint): void;
  requestAdded(req: LiveRequest, input: AddInput): void;
  prefillCompleted(req: LiveRequest): void;
  /** A decaying request became its rank's prefill anchor at `at` (epoch ms), after its add. */
  anchorMoved(req: LiveRequest, at: number): void;
  requestRemoved(req: LiveRequest): void;
  /** The last worker left: the tracker and all its live state are gone. */
  trackerDeleted(): void;
  /** A worker's ranks changed in place (a catalog range change): bookings on the ranks it kept stay. */
  workerReshaped?(input: RegisterInput, key: EventKey): void;
  /** A catalog record was written, or its rank floors moved: `event` is its winning upsert. */
  catalogSet?(event: CatalogUpsertEvent): void;
  /** A worker left the catalog. */
  catalogCleared?(workerId: bigint): void;
  /** A lease's grants or cuts changed: `lease` is its whole state, one row. */
  leaseSet?(lease: LeaseState): void;
  /** A lease has nothing left to remember. */
  leaseCleared?(owner: string): void;
  /** A change accepted here, to be shipped to the other replicas. */
  emitted?(event: ReplicaEvent): void;
  /** A replication record (tombstone or early mark) was set or replaced. */
  recordSet?(kind: RecordKind, id: string, key: EventKey): void;
  /** A replication record, whose key was `key`, was dropped (not by age). */
  recordCleared?(kind: RecordKind, id: string, key: EventKey): void;
  /** Tombstones and marks with physical times below `beforeMs` are forgotten. */
  recordsPurged?(beforeMs: number): void;
  /** A booking kept aside until its worker is known here (or it expires). */
  orphanSet?(event: AddEvent): void;
  orphanCleared?(requestId: string): void;
  /** A registration kept aside because its block size lost to the tracker's. */
  excludedSet?(event: RegisterEvent): void;
  excludedCleared?(workerId: bigint): void;
  /** A change kept in a request's prefill timeline (`departure-log.ts`); a booked add once it leaves. */
  timelineSet?(event: TimelineEvent): void;
  /** Timeline changes with hybrid clock times below `beforeTs` are forgotten. */
  timelinePurged?(beforeTs: number): void;
  /** A KV-event stream's epoch or position moved (`core/kv-events/`): one row per stream. */
  kvStreamSet?(stream: KvStream): void;
  /** A rank's stream is gone (its rank left the worker's range). */
  kvStreamCleared?(workerId: bigint, dpRank: number): void;
  /** One accepted call's changes to a rank's cached blocks: one journal row. */
  kvApplied?(workerId: bigint, dpRank: number, changes: readonly KvChange[]): void;
  /** What a rank holds now replaces its journal and older checkpoint (parents before children). */
  kvCheckpointed?(workerId: bigint, dpRank: number, runs: readonly Omit<KvStoredChange, "kind">[]): void;
  /** A rank's cached blocks are gone (a new epoch, or the rank left): its journal and checkpoint go. */
  kvRankCleared?(workerId: bigint, dpRank: number): void;
  /** A worker left: its streams, journal and checkpoints go. */
  kvWorkerCleared?(workerId: bigint): void;
}

const nothing = (): void => {};

export const NULL_STORE: TrackerStore = {
  workerAdded: nothing,
  workerRemoved: nothing,
  requestAdded: nothing,
  prefillCompleted: nothing,
  anchorMoved: nothing,
  requestRemoved: nothing,
  trackerDeleted: nothing,
};
