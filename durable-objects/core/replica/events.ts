import type { AddInput, RegisterInput } from "../../types";
import type { CatalogFields } from "../catalog/catalog-record";
import type { RankRange } from "../catalog/dp-ranks";
import type { FloorSegment } from "../catalog/rank-floors";
import type { KvChange, KvEpoch } from "../kv-events/kv-stream";
import type { EventKey } from "./clock";

/**
 * A change accepted at one replica, as shipped to the others. Each carries its key; applying the
 * same set of changes in any order gives the same state (see `replica-merge.ts`).
 */
export type ReplicaEvent =
  | (EventKey & { type: "register" } & RegisterInput)
  | (EventKey & { type: "unregister"; workerId: bigint })
  | (EventKey &
      AddInput & {
        type: "add";
        /** When the origin booked it, epoch ms (prefill anchor). */
        startedAt: number;
        /** When it expires everywhere, epoch ms: carried so that every replica expires it at once. */
        deadline: number;
      })
  | (EventKey & { type: "prefill_complete"; requestId: string })
  | (EventKey & { type: "free"; requestId: string })
  | (EventKey & {
      type: "bind";
      /** A `/route` session bound to a rank on one hop until `expiresAt` (epoch ms). */
      sessionId: string;
      hop: "decode" | "prefill";
      workerId: bigint;
      dpRank: number;
      expiresAt: number;
    })
  | (EventKey & {
      /** A catalog record written (`POST` or `PATCH /selection/workers`), merged by `catalog-merge.ts`. */
      type: "catalog_upsert";
      workerId: bigint;
      /** The record as written: a POST's whole, a PATCH's merged into the record at its origin. */
      fields: CatalogFields;
      /** Founder order: since when it may fix the partition with this block size and eagle flag. */
      candidacy: EventKey;
      /** Whether its origin found it agreeing with the partition's other founders (`partition-fix.ts`). */
      agreed: boolean;
      /** Ranks whose live bookings this change keeps (those its old and new ranges share); none when absent. */
      keeps?: RankRange;
      /** Over `keeps`: the newest key of another change of the worker that did not keep the rank. */
      floors: FloorSegment[];
    })
  /** A worker leaving the catalog (`DELETE /selection/workers/{id}`, or `/unregister` of a catalog worker). */
  | (EventKey & { type: "catalog_remove"; workerId: bigint })
  /** A lease created or renewed (`POST /leases`): a grant made at `at` until `deadline` (epoch ms). */
  | (EventKey & { type: "lease"; owner: string; at: number; deadline: number })
  /** A lease ended at `at` (epoch ms): deleted there, or lapsed at its deadline (`lease-table.ts`). */
  | (EventKey & { type: "lease_cut"; owner: string; at: number })
  /** Engine KV-event batches a call applied to one rank, in its epoch (`core/kv-events/`). */
  | (EventKey & {
      type: "kv_events";
      workerId: bigint;
      dpRank: number;
      epoch: KvEpoch;
      /** Sequence number of the first batch applied; `count` batches, so the next is `firstSeq + count`. */
      firstSeq: number;
      count: number;
      changes: KvChange[];
    })
  /**
   * Part `part` of what one rank holds, in a snapshot: part 0 carries the stream's position and
   * replaces what a peer behind it holds; the later parts add to it (stored runs only).
   */
  | (EventKey & {
      type: "kv_rank";
      workerId: bigint;
      dpRank: number;
      epoch: KvEpoch;
      nextSeq: number;
      part: number;
      changes: KvChange[];
    });

export type AddEvent = Extract<ReplicaEvent, { type: "add" }>;
export type RegisterEvent = Extract<ReplicaEvent, { type: "register" }>;
export type BindEvent = Extract<ReplicaEvent, { type: "bind" }>;
export type LeaseEvent = Extract<ReplicaEvent, { type: "lease" }>;
export type LeaseCutEvent = Extract<ReplicaEvent, { type: "lease_cut" }>;
export type KvEventsEvent = Extract<ReplicaEvent, { type: "kv_events" }>;
export type KvRankEvent = Extract<ReplicaEvent, { type: "kv_rank" }>;
export type CatalogUpsertEvent = Extract<ReplicaEvent, { type: "catalog_upsert" }>;

/** A change that starts or ends a request's prefill: what a request id's timeline holds. */
export type TimelineEvent = AddEvent | Extract<ReplicaEvent, { type: "free" | "prefill_complete" }>;
