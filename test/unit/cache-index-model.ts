/**
 * The cache index's contract in its plainest form, for the property tests: one Map of entries keyed
 * by everything that identifies one, every operation a scan. It states the approximate index's rules
 * directly: a deadline is the latest `at + ttl` recorded; a recording due by the latest expiry is
 * ignored; past the cap, the lowest entry in (deadline, deepest position, worker, rank, hashes) goes.
 */
import type {
  CacheIndexStats,
  PromptBlocks,
  RankOverlap,
  RouterEvent,
} from "../../durable-objects/core/cache-index/cache-index";

export const U64_MAX = 2n ** 64n - 1n;
export const U32_MAX = 2 ** 32 - 1;

/** A prompt whose sequence hashes chain its local ones (a stand-in for Dynamo's xxh3 chain). */
export function prompt(...locals: bigint[]): PromptBlocks {
  const seqs: bigint[] = [];
  locals.forEach((local, i) => {
    seqs.push(i === 0 ? local : (seqs[i - 1]! * 0x100000001b3n + local + 1n) & U64_MAX);
  });
  return raw(locals, seqs);
}

/** A prompt with the given hashes as they are, consistent or not (a trusted client's `block_hashes`). */
export function raw(locals: bigint[], seqs: bigint[]): PromptBlocks {
  return { localHashes: BigUint64Array.from(locals), sequenceHashes: BigUint64Array.from(seqs) };
}

export interface ModelEntry {
  workerId: bigint;
  dpRank: number;
  position: number;
  seq: bigint;
  local: bigint;
  /** The previous block's sequence hash; 0 at position 0. */
  parent: bigint;
  deadline: number;
}

export const entryKey = (e: Omit<ModelEntry, "deadline">): string =>
  `${e.workerId}/${e.dpRank}/${e.position}/${e.seq}/${e.local}/${e.parent}`;

function blockOf(p: PromptBlocks, i: number): Pick<ModelEntry, "position" | "seq" | "local" | "parent"> {
  return {
    position: i,
    seq: p.sequenceHashes[i]!,
    local: p.localHashes[i]!,
    parent: i > 0 ? p.sequenceHashes[i - 1]! : 0n,
  };
}

const lengthOf = (p: PromptBlocks) => Math.min(p.localHashes.length, p.sequenceHashes.length);
const cmp = (a: bigint | number, b: bigint | number) => (a < b ? -1 : a > b ? 1 : 0);

/** Eviction order: the first entry in it goes first. */
function lower(a: ModelEntry, b: ModelEntry): number {
  return (
    cmp(a.deadline, b.deadline) ||
    cmp(b.position, a.position) ||
    cmp(a.workerId, b.workerId) ||
    cmp(a.dpRank, b.dpRank) ||
    cmp(a.seq, b.seq) ||
    cmp(a.local, b.local) ||
    cmp(a.parent, b.parent)
  );
}

export class CacheIndexModel {
  entries = new Map<string, ModelEntry>();
  private horizon = Number.NEGATIVE_INFINITY;
  private evicted = 0;
  private expired = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  recordBooking(workerId: bigint, dpRank: number, p: PromptBlocks, at: number): number {
    const deadline = at + this.ttlMs;
    if (lengthOf(p) === 0 || !(deadline > this.horizon)) return 0;
    for (let i = 0; i < lengthOf(p); i++) {
      const entry = { workerId, dpRank, ...blockOf(p, i), deadline };
      const key = entryKey(entry);
      const old = this.entries.get(key);
      this.entries.set(key, old && old.deadline >= deadline ? old : entry);
    }
    let dropped = 0;
    while (this.entries.size > this.maxEntries) {
      const victim = [...this.entries.values()].reduce((a, b) => (lower(a, b) <= 0 ? a : b));
      this.entries.delete(entryKey(victim));
      dropped++;
    }
    this.evicted += dropped;
    return dropped;
  }

  overlap(p: PromptBlocks, now: number): RankOverlap[] {
    const ranks = new Map<string, { workerId: bigint; dpRank: number }>();
    for (const e of this.entries.values()) ranks.set(`${e.workerId}/${e.dpRank}`, e);
    const rows: RankOverlap[] = [];
    for (const { workerId, dpRank } of ranks.values()) {
      let run = 0;
      while (run < lengthOf(p)) {
        const e = this.entries.get(entryKey({ workerId, dpRank, ...blockOf(p, run) }));
        if (!e || e.deadline <= now) break;
        run++;
      }
      if (run > 0) {
        rows.push({
          workerId,
          dpRank,
          deviceBlocks: run,
          hostPinnedBlocks: 0,
          diskBlocks: 0,
          externalBlocks: 0,
        });
      }
    }
    return rows.sort((a, b) => cmp(a.workerId, b.workerId) || a.dpRank - b.dpRank);
  }

  removeWorker(workerId: bigint): number {
    return this.removeWhere((e) => e.workerId === workerId);
  }

  removeRank(workerId: bigint, dpRank: number): number {
    return this.removeWhere((e) => e.workerId === workerId && e.dpRank === dpRank);
  }

  expire(now: number): number {
    if (now > this.horizon) this.horizon = now;
    const n = this.removeWhere((e) => e.deadline <= now);
    this.expired += n;
    return n;
  }

  nextDeadline(): number | null {
    let min: number | null = null;
    for (const e of this.entries.values()) if (min === null || e.deadline < min) min = e.deadline;
    return min;
  }

  stats(): Omit<CacheIndexStats, "memoryBytes" | "maxEntries"> {
    const values = [...this.entries.values()];
    return {
      entries: values.length,
      blocks: new Set(values.map((e) => `${e.position}/${e.seq}/${e.local}/${e.parent}`)).size,
      ranks: new Set(values.map((e) => `${e.workerId}/${e.dpRank}`)).size,
      evicted: this.evicted,
      expired: this.expired,
    };
  }

  private removeWhere(test: (e: ModelEntry) => boolean): number {
    let n = 0;
    for (const [key, e] of this.entries) {
      if (!test(e)) continue;
      this.entries.delete(key);
      n++;
    }
    return n;
  }
}

/** The entry keys a dump describes: each event's chain, positions and parents read off it. */
export function keysOfDump(events: readonly RouterEvent[]): string[] {
  const keys: string[] = [];
  for (const { worker_id, event } of events) {
    const { parent_hash, start_position, blocks } = event.data.stored;
    let parent = parent_hash ?? 0n;
    blocks.forEach((block, k) => {
      keys.push(
        entryKey({
          workerId: worker_id,
          dpRank: event.dp_rank,
          position: (start_position ?? 0) + k,
          seq: block.block_hash,
          local: block.tokens_hash,
          parent,
        }),
      );
      parent = block.block_hash;
    });
  }
  return keys;
}
