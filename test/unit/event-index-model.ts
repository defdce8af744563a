/**
 * The event index's rules in their plainest form, for the property tests: per rank a Map of
 * entries by engine hash, each with its whole path of local hashes, every operation a scan. It
 * states the rules directly: a run chains under a held parent or the root; a held hash at another
 * path moves (its subtree dropped first) unless it is on the run's own chain, which cuts the run;
 * a block left in no tier goes with its subtree; past the cap the leaf lowest in (age, the order it
 * became a leaf) goes, one at a time.
 */
import type {
  RankOverlap,
  RouterEvent,
  StorageTier,
} from "../../durable-objects/core/cache-index/cache-index";
import type { KvHeldRun } from "../../durable-objects/core/cache-index/event-index";
import type { KvRemovedOp, KvStoredOp } from "../../durable-objects/kv-event-types";

export const TIERS: StorageTier[] = ["device", "host_pinned", "disk", "external"];
const bitOf = (tier: StorageTier) => 1 << TIERS.indexOf(tier);
const cmp = (a: bigint | number, b: bigint | number) => (a < b ? -1 : a > b ? 1 : 0);

export interface ModelEntry {
  engine: bigint;
  locals: bigint[];
  path: string;
  parent: bigint | null;
  tiers: number;
  age: number;
  /** When it last became a leaf (or a re-store made it newer as one): the cap's tie-break. */
  seq: number;
}

interface ModelRank {
  workerId: bigint;
  dpRank: number;
  entries: Map<bigint, ModelEntry>;
}

export class EventIndexModel {
  ranks = new Map<string, ModelRank>();
  evicted = 0;
  private seq = 0;

  constructor(private readonly maxEntries: number) {}

  applyStored(workerId: bigint, dpRank: number, op: KvStoredOp, at: number) {
    const n = Math.min(op.engineHashes.length, op.localHashes.length);
    if (n === 0) return { stored: 0, orphaned: 0, evicted: 0 };
    const key = `${workerId}/${dpRank}`;
    let rank = this.ranks.get(key);
    let attach: ModelEntry | null = null;
    if (op.parent !== null) {
      attach = rank?.entries.get(BigInt.asUintN(64, op.parent)) ?? null;
      if (!attach) return { stored: 0, orphaned: n, evicted: 0 };
    }
    if (!rank) {
      rank = { workerId, dpRank, entries: new Map() };
      this.ranks.set(key, rank);
    }
    let stored = 0;
    for (; stored < n; stored++) {
      const engine = op.engineHashes[stored]!;
      const locals = [...(attach?.locals ?? []), op.localHashes[stored]!];
      const path = locals.join(",");
      let e = rank.entries.get(engine);
      if (e && e.path !== path) {
        if (this.onChain(rank, e, attach)) break;
        this.removeSubtree(rank, e);
        e = undefined;
      }
      if (e) {
        e.tiers |= bitOf(op.tier);
        if (at > e.age) {
          e.age = at;
          if (this.isLeaf(rank, e)) e.seq = this.seq++;
        }
      } else {
        e = {
          engine,
          locals,
          path,
          parent: attach?.engine ?? null,
          tiers: bitOf(op.tier),
          age: at,
          seq: this.seq++,
        };
        rank.entries.set(engine, e);
      }
      attach = e;
    }
    const evicted = this.evictOverCap();
    this.dropEmptyRanks();
    return { stored, orphaned: n - stored, evicted };
  }

  applyRemoved(workerId: bigint, dpRank: number, op: KvRemovedOp): number {
    const rank = this.ranks.get(`${workerId}/${dpRank}`);
    if (!rank) return 0;
    let removed = 0;
    for (const h of op.engineHashes) {
      const e = rank.entries.get(h);
      if (!e || (e.tiers & bitOf(op.tier)) === 0) continue;
      e.tiers &= ~bitOf(op.tier);
      if (e.tiers === 0) removed += this.removeSubtree(rank, e);
    }
    this.dropEmptyRanks();
    return removed;
  }

  removeRank(workerId: bigint, dpRank: number): number {
    const key = `${workerId}/${dpRank}`;
    const n = this.ranks.get(key)?.entries.size ?? 0;
    this.ranks.delete(key);
    return n;
  }

  removeWorker(workerId: bigint): number {
    let n = 0;
    for (const r of [...this.ranks.values()])
      if (r.workerId === workerId) n += this.removeRank(workerId, r.dpRank);
    return n;
  }

  rankEntries(workerId: bigint, dpRank: number): number {
    return this.ranks.get(`${workerId}/${dpRank}`)?.entries.size ?? 0;
  }

  sortedRanks(): ModelRank[] {
    return [...this.ranks.values()].sort((a, b) => cmp(a.workerId, b.workerId) || a.dpRank - b.dpRank);
  }

  overlap(locals: BigUint64Array): RankOverlap[] {
    const rows: RankOverlap[] = [];
    for (const rank of this.sortedRanks()) {
      const counts = [0, 0, 0, 0];
      let phase = 0;
      for (let i = 0; i < locals.length; i++) {
        const path = [...locals.subarray(0, i + 1)].join(",");
        let tiers = 0;
        for (const e of rank.entries.values()) if (e.path === path) tiers |= e.tiers;
        while (phase < 4 && (tiers & (1 << phase)) === 0) phase++;
        if (phase === 4) break;
        counts[phase]!++;
      }
      if (counts.some((c) => c > 0)) {
        rows.push({
          workerId: rank.workerId,
          dpRank: rank.dpRank,
          deviceBlocks: counts[0]!,
          hostPinnedBlocks: counts[1]!,
          diskBlocks: counts[2]!,
          externalBlocks: counts[3]!,
        });
      }
    }
    return rows;
  }

  stats() {
    const all = [...this.ranks.values()].flatMap((r) => [...r.entries.values()]);
    return {
      entries: all.length,
      blocks: new Set(all.map((e) => e.path)).size,
      ranks: this.ranks.size,
      evicted: this.evicted,
    };
  }

  /** Every (rank, tier, block) held, as `dumpKeys` spells them. */
  heldKeys(): string[] {
    return this.eachHeld((r, tier, e) =>
      heldKey(r.workerId, r.dpRank, tier, e.locals.length - 1, e.engine, e.locals.at(-1)!, e.parent),
    );
  }

  /** Every (rank, tier, block) held with its age, as `runKeys` spells them. */
  ageKeys(): string[] {
    return this.eachHeld((r, tier, e) => `${r.workerId}/${r.dpRank}/${tier}/${e.engine}@${e.age}`);
  }

  private eachHeld(key: (r: ModelRank, tier: StorageTier, e: ModelEntry) => string): string[] {
    const keys: string[] = [];
    for (const rank of this.ranks.values()) {
      for (const e of rank.entries.values()) {
        TIERS.forEach((tier, t) => {
          if (e.tiers & (1 << t)) keys.push(key(rank, tier, e));
        });
      }
    }
    return keys.sort();
  }

  private isLeaf(rank: ModelRank, e: ModelEntry): boolean {
    for (const c of rank.entries.values()) if (c.parent === e.engine) return false;
    return true;
  }

  private onChain(rank: ModelRank, e: ModelEntry, from: ModelEntry | null): boolean {
    for (let a = from; a; a = a.parent === null ? null : rank.entries.get(a.parent)!)
      if (a === e) return true;
    return false;
  }

  private removeSubtree(rank: ModelRank, e: ModelEntry): number {
    const gone = [e];
    for (let k = 0; k < gone.length; k++) {
      for (const c of rank.entries.values()) if (c.parent === gone[k]!.engine) gone.push(c);
    }
    for (const g of gone) rank.entries.delete(g.engine);
    const parent = e.parent === null ? undefined : rank.entries.get(e.parent);
    if (parent && this.isLeaf(rank, parent)) parent.seq = this.seq++;
    return gone.length;
  }

  private evictOverCap(): number {
    let n = 0;
    while (this.stats().entries > this.maxEntries) {
      let victim: { rank: ModelRank; e: ModelEntry } | null = null;
      for (const rank of this.ranks.values()) {
        for (const e of rank.entries.values()) {
          if (!this.isLeaf(rank, e)) continue;
          if (!victim || e.age < victim.e.age || (e.age === victim.e.age && e.seq < victim.e.seq))
            victim = { rank, e };
        }
      }
      this.removeSubtree(victim!.rank, victim!.e);
      n++;
    }
    this.evicted += n;
    return n;
  }

  private dropEmptyRanks(): void {
    for (const [key, r] of this.ranks) if (r.entries.size === 0) this.ranks.delete(key);
  }
}

function heldKey(
  workerId: bigint,
  dpRank: number,
  tier: StorageTier,
  depth: number,
  engine: bigint,
  local: bigint,
  parent: bigint | null,
): string {
  return `${workerId}/${dpRank}/${tier}/${depth}/${engine}/${local}/${parent ?? "root"}`;
}

/** The (rank, tier, block) keys a dump describes (positions and parents read off its chains). */
export function dumpKeys(events: readonly RouterEvent[]): string[] {
  const keys: string[] = [];
  for (const { worker_id, storage_tier, event } of events) {
    const { parent_hash, start_position, blocks } = event.data.stored;
    let parent = parent_hash;
    blocks.forEach((b, k) => {
      keys.push(
        heldKey(
          worker_id,
          event.dp_rank,
          storage_tier,
          (start_position ?? 0) + k,
          b.block_hash,
          b.tokens_hash,
          parent,
        ),
      );
      parent = b.block_hash;
    });
  }
  return keys;
}

/** The (rank, tier, block, age) keys a rank's held runs describe. */
export function runKeys(workerId: bigint, dpRank: number, runs: Iterable<KvHeldRun>): string[] {
  const keys: string[] = [];
  for (const run of runs)
    for (const h of run.engineHashes) keys.push(`${workerId}/${dpRank}/${run.tier}/${h}@${run.at}`);
  return keys;
}

/** A Stored op from a held run (or any engine and local hashes). */
export function storedOp(run: Omit<KvHeldRun, "at">): KvStoredOp {
  return { kind: "stored", blockSize: 4, ...run };
}
