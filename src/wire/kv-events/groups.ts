/**
 * KV-cache groups of hybrid models (vLLM's HMA, #37688 / #40984): an engine whose layers mix full
 * attention with sliding-window or Mamba layers reports each group's blocks in events of their own,
 * under the same block hashes. Only the main-attention groups' blocks are a reusable prefix cache, so
 * as Dynamo's `ZmqEventNormalizer` does, an event is kept when its `kv_cache_spec_kind` is main
 * attention, or when it names no kind and its group is one a stored event of the same rank has shown
 * to be main attention, or is group 0 and unknown; every other group's events are skipped (a removal
 * from a sliding window must not remove the full-attention block of the same hash).
 *
 * Dynamo learns a group's kind over the life of its listener; this decoder is pure, so it learns
 * within one call only. A removal of group g > 0 whose kind is not in the same call is skipped, as
 * Dynamo skips one before it has learned g: wrong only for a main-attention group numbered above 0.
 */

/** `KvCacheSpecKind::is_main_attention`; unknown kinds are not main attention either. */
const MAIN_ATTENTION = new Set(["full_attention", "mla_attention", "sink_full_attention"]);

export class GroupKinds {
  /** rank (-1: none named) → group → kind. */
  private readonly kinds = new Map<number, Map<number, string>>();

  /** A stored event's group and kind, both given: what the group is from now on. */
  learn(rank: number | null, group: number | null, kind: string | null): void {
    if (group === null || kind === null) return;
    const key = rank ?? -1;
    let groups = this.kinds.get(key);
    if (groups === undefined) {
      groups = new Map();
      this.kinds.set(key, groups);
    }
    groups.set(group, kind);
  }

  /** Whether an event of this group and kind describes the main-attention cache. */
  isMain(rank: number | null, group: number | null, kind: string | null): boolean {
    if (kind !== null) return MAIN_ATTENTION.has(kind);
    if (group === null) return true;
    const learned = this.kinds.get(rank ?? -1)?.get(group);
    if (learned !== undefined) return MAIN_ATTENTION.has(learned);
    return group === 0;
  }
}
