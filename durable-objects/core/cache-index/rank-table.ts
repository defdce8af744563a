/**
 * The (worker, dp_rank) pairs that hold entries, each with a small id that the entries store and the
 * overlap walk indexes scratch arrays with. A rank exists while it holds an entry; its id is then
 * reused. Ids are an internal detail: nothing returned depends on them (rows are sorted by worker
 * and rank), so replicas that assigned them in another order still answer alike.
 */
import { grown, NONE, nextCapacity } from "./arrays";

export class RankTable {
  workerOf: bigint[] = [];
  dpRankOf: number[] = [];
  /** First entry of each rank's list (through the entries' `byRank` links). */
  head: Int32Array;
  /** Entries each rank holds. */
  count: Int32Array;
  capacity: number;
  size = 0;
  private byWorker = new Map<bigint, Map<number, number>>();
  private free: number[] = [];

  constructor(initialCapacity = 64) {
    this.capacity = initialCapacity;
    this.head = new Int32Array(initialCapacity).fill(NONE);
    this.count = new Int32Array(initialCapacity);
  }

  idOf(workerId: bigint, dpRank: number): number {
    return this.byWorker.get(workerId)?.get(dpRank) ?? NONE;
  }

  intern(workerId: bigint, dpRank: number): number {
    let ranks = this.byWorker.get(workerId);
    const known = ranks?.get(dpRank);
    if (known !== undefined) return known;
    if (!ranks) {
      ranks = new Map();
      this.byWorker.set(workerId, ranks);
    }
    let r = this.free.pop();
    if (r === undefined) {
      r = this.workerOf.length;
      if (r === this.capacity) this.grow(nextCapacity(this.capacity));
    }
    this.workerOf[r] = workerId;
    this.dpRankOf[r] = dpRank;
    this.head[r] = NONE;
    this.count[r] = 0;
    ranks.set(dpRank, r);
    this.size++;
    return r;
  }

  /** The ids of `workerId`'s ranks, in no particular order (a copy: callers release them). */
  ranksOf(workerId: bigint): number[] {
    return [...(this.byWorker.get(workerId)?.values() ?? [])];
  }

  /** Forgets rank `r`, which holds no entry any more. */
  release(r: number): void {
    const workerId = this.workerOf[r]!;
    const ranks = this.byWorker.get(workerId)!;
    ranks.delete(this.dpRankOf[r]!);
    if (ranks.size === 0) this.byWorker.delete(workerId);
    this.free.push(r);
    this.size--;
  }

  /** Live rank ids sorted by (worker id, dp_rank): the order of every answer. */
  sorted(): number[] {
    const ids: number[] = [];
    for (const ranks of this.byWorker.values()) ids.push(...ranks.values());
    return ids.sort((a, b) => compareRanks(this, a, b));
  }

  get bytes(): number {
    // A rank's Map entries and array slots: a rough figure, as ranks are few (at most 65,536).
    return this.head.byteLength + this.count.byteLength + this.capacity * 16 + this.size * 120;
  }

  private grow(capacity: number): void {
    this.head = grown(this.head, capacity);
    this.count = grown(this.count, capacity);
    this.capacity = capacity;
  }
}

export function compareRanks(ranks: RankTable, a: number, b: number): number {
  const wa = ranks.workerOf[a]!;
  const wb = ranks.workerOf[b]!;
  if (wa !== wb) return wa < wb ? -1 : 1;
  return ranks.dpRankOf[a]! - ranks.dpRankOf[b]!;
}
