/**
 * Cutting a trie segment where a new prompt leaves it. The head gets a new id and takes the segment's
 * place under its parent; the tail keeps the id, so its children and the requests ending at it need
 * no update. Both parts keep the segment's coverage: every prompt through it ran through all of it.
 * The smaller part moves to chunks of its own, so that every chunk keeps a single owner.
 */
import { type BlockPool, CHUNK } from "./block-pool";
import type { RankCover } from "./rank-cover";
import {
  COUNT,
  FIRST_HI,
  FIRST_LO,
  LEN,
  MASK_HI,
  MASK_LO,
  MULTI,
  PARENT,
  RANK,
  type SegmentTable,
  START,
  STRIDE,
} from "./trie-segments";
import type { ValueGroups } from "./value-groups";

export interface TrieParts {
  pool: BlockPool;
  segments: SegmentTable;
  ranks: RankCover;
  groups: ValueGroups;
}

/** Cuts `seg` after its first `k` blocks (0 < k < length); returns the head's id. */
export function splitSegment(parts: TrieParts, seg: number, k: number): number {
  const { pool, segments, groups } = parts;
  const head = segments.allocate();
  const d = segments.data;
  const s = seg * STRIDE;
  const h = head * STRIDE;
  const start = d[s + START]!;
  const len = d[s + LEN]!;
  const last = pool.advance(start, k - 1);
  const tail = pool.after(last);
  const headShared = groups.countSharedIn(start, k, seg);
  d[h + PARENT] = d[s + PARENT]!;
  d[h + LEN] = k;
  d[h + RANK] = d[s + RANK]!;
  d[h + COUNT] = d[s + COUNT]!;
  d[h + FIRST_LO] = d[s + FIRST_LO]!;
  d[h + FIRST_HI] = d[s + FIRST_HI]!;
  d[h + MASK_LO] = d[s + MASK_LO]!;
  d[h + MASK_HI] = d[s + MASK_HI]!;
  if (d[s + RANK] === MULTI) parts.ranks.copy(seg, head);
  segments.replace(seg, head);
  d[s + PARENT] = head;
  d[s + LEN] = len - k;
  d[s + FIRST_LO] = pool.words[2 * tail]!;
  d[s + FIRST_HI] = pool.words[2 * tail + 1]!;
  segments.link(seg);
  if ((tail & (CHUNK - 1)) === 0) {
    // The cut falls between two chunks: each part keeps its own, nothing moves.
    d[h + START] = start;
    d[s + START] = tail;
    pool.relabel(start, k, head);
  } else if (k <= len - k) {
    d[h + START] = moveRun(parts, start, k, seg, head);
    d[s + START] = tail;
    pool.trimFront(start, k);
  } else {
    d[h + START] = start;
    d[s + START] = moveRun(parts, tail, len - k, seg, seg);
    pool.relabel(start, k, head);
    pool.trim(last, len - k);
  }
  segments.sharedIn[head] = headShared;
  segments.sharedIn[seg]! -= headShared;
  return head;
}

/** Copies `length` blocks of `from` (starting at `start`) to a new run owned by `to`; returns its start. */
function moveRun(parts: TrieParts, start: number, length: number, from: number, to: number): number {
  const { pool, groups } = parts;
  const target = pool.allocate(length, to);
  pool.live -= length;
  const w = pool.words;
  let p = start;
  let q = target;
  for (let k = 0; k < length; k++) {
    if (k > 0) {
      p = pool.after(p);
      q = pool.after(q);
    }
    w[2 * q] = w[2 * p]!;
    w[2 * q + 1] = w[2 * p + 1]!;
  }
  groups.moveRun(start, target, length, from);
  return target;
}
