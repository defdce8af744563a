/**
 * `/dump`'s recovery form of an index (reference selection §1.1, §8): per rank, sorted by worker and
 * dp_rank, the blocks it holds as chains of Stored events, as Dynamo's newer radix dump merges them.
 * A chain runs from a root (position 0, or a block whose parent the rank does not hold) through
 * single children; where a block has several children each starts an event whose `parent_hash` is
 * that block. Roots and children go in (position, sequence, local, parent hash) order, so a dump is
 * a function of the index's contents, not of the order they were recorded in. A rare admin call:
 * it builds maps and bigints freely.
 */
import type { RouterEvent, StorageTier, StoredBlock } from "./cache-index";

/** What a dump reads of an index. */
export interface DumpSource {
  /** Ranks holding blocks, in answer order. */
  ranks(): Iterable<{ workerId: bigint; dpRank: number; blocks: number[] }>;
  position(block: number): number;
  sequenceHash(block: number): bigint;
  localHash(block: number): bigint;
  parentHash(block: number): bigint;
}

export function dumpEvents(source: DumpSource, tier: StorageTier): RouterEvent[] {
  const events: RouterEvent[] = [];
  for (const { workerId, dpRank, blocks } of source.ranks()) {
    const byParent = new Map<string, number[]>();
    const held = new Set<string>();
    for (const b of blocks) {
      held.add(`${source.position(b)}:${source.sequenceHash(b)}`);
      const p = source.position(b);
      if (p === 0) continue;
      const key = `${p - 1}:${source.parentHash(b)}`;
      const siblings = byParent.get(key);
      if (siblings) siblings.push(b);
      else byParent.set(key, [b]);
    }
    const order = (a: number, b: number) => compareBlocks(source, a, b);
    const roots = blocks
      .filter((b) => {
        const p = source.position(b);
        return p === 0 || !held.has(`${p - 1}:${source.parentHash(b)}`);
      })
      .sort(order);
    const emitted = new Set<number>();
    const childrenOf = (b: number) =>
      (byParent.get(`${source.position(b)}:${source.sequenceHash(b)}`) ?? [])
        .filter((c) => !emitted.has(c))
        .sort(order);
    const stack = roots.reverse();
    while (stack.length > 0) {
      const first = stack.pop()!;
      if (emitted.has(first)) continue;
      emitted.add(first);
      const chain: StoredBlock[] = [blockOf(source, first)];
      let last = first;
      let children = childrenOf(last);
      while (children.length === 1) {
        last = children[0]!;
        emitted.add(last);
        chain.push(blockOf(source, last));
        children = childrenOf(last);
      }
      const start = source.position(first);
      const stored: RouterEvent["event"]["data"]["stored"] =
        start === 0
          ? { parent_hash: null, blocks: chain }
          : { parent_hash: source.parentHash(first), start_position: start, blocks: chain };
      events.push({
        worker_id: workerId,
        storage_tier: tier,
        event: { event_id: events.length, data: { stored }, dp_rank: dpRank },
      });
      for (let k = children.length - 1; k >= 0; k--) stack.push(children[k]!);
    }
  }
  return events;
}

function blockOf(source: DumpSource, b: number): StoredBlock {
  return { block_hash: source.sequenceHash(b), tokens_hash: source.localHash(b) };
}

function compareBlocks(source: DumpSource, a: number, b: number): number {
  const depth = source.position(a) - source.position(b);
  if (depth !== 0) return depth;
  return (
    compareU64(source.sequenceHash(a), source.sequenceHash(b)) ||
    compareU64(source.localHash(a), source.localHash(b)) ||
    compareU64(source.parentHash(a), source.parentHash(b))
  );
}

function compareU64(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
