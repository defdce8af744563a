/**
 * `core/kv-events/`: engine KV events in the tracker (SPEC §9). The sequence of each (worker, rank)
 * publisher (this file), the state that holds the exact index and the streams (`kv-state.ts`), the
 * admission of a `POST /kv_events` call (`kv-intake.ts`) and the merge of another replica's
 * (`kv-merge.ts`). The index itself is the cache-index wing's (`cache-index/event-index.ts`).
 *
 * An **epoch** is one sender's view of one publisher's life: its `name` (`x-kv-event-epoch`) and the
 * key of the call that started it at its origin. Epochs are ordered by that key, so two replicas
 * that each started one (a relay that moved between them) agree which is current: the newer. A
 * replica accepts calls only in an epoch it started itself (one writer per epoch): a call naming the
 * epoch of another replica starts a new epoch here, which clears the rank as every new epoch does,
 * because this replica cannot know whether it has every batch the other one accepted.
 */
import type { KvClearedOp, KvRemovedOp } from "../../kv-event-types";
import type { StorageTier } from "../cache-index/cache-index";
import { compareKeys, type EventKey } from "../replica/clock";

export interface KvEpoch {
  name: string;
  /** The key of the call that started the epoch, at its origin (`origin` names the epoch's writer). */
  key: EventKey;
}

export interface KvStream {
  workerId: bigint;
  dpRank: number;
  epoch: KvEpoch;
  /** The publisher's sequence number expected next. */
  nextSeq: number;
}

/** Order of epochs: by the key that started them (names never decide; two starts never share a key). */
export function compareEpochs(a: KvEpoch, b: KvEpoch): number {
  return compareKeys(a.key, b.key);
}

export function streamKey(workerId: bigint, dpRank: number): string {
  return `${workerId}:${dpRank}`;
}

/**
 * A change to one rank's cached blocks as the tracker keeps, ships and stores it: an engine event
 * after intake, a stored run carrying the time its blocks count from (epoch ms: the accepting
 * call's key time, the same at every replica), which orders eviction.
 */
export type KvChange =
  | {
      kind: "stored";
      tier: StorageTier;
      engineHashes: BigUint64Array;
      parent: bigint | null;
      localHashes: BigUint64Array;
      at: number;
    }
  | KvRemovedOp
  | KvClearedOp;

export type KvStoredChange = Extract<KvChange, { kind: "stored" }>;
