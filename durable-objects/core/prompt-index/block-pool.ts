/**
 * Storage for the prompt trie's block hashes: fixed chunks of {@link CHUNK} hashes, each hash as two
 * u32 words, chained into runs. A trie segment is a run from a start position for a length, and owns
 * every chunk its run touches (a split copies the smaller part into chunks of its own), so a chunk
 * records its segment and nothing per hash does. Fixed-size chunks never fragment: a freed chunk
 * serves any later run.
 *
 * A position is `chunk * CHUNK + slot`; its words are `words[2p]` (low) and `words[2p + 1]` (high).
 */

export const CHUNK = 16;
const SHIFT = 4;
const NONE = -1;

export class BlockPool {
  words = new Uint32Array(0);
  /** Segment owning each chunk. */
  private segOfChunk = new Int32Array(0);
  private next = new Int32Array(0);
  private capacity = 0;
  private used = 0;
  private freeHead = NONE;
  /** Live positions (for memory and test figures). */
  live = 0;
  /** Chunks in use (for leak tests). */
  chunks = 0;

  constructor(initialPositions: number) {
    this.grow(Math.max(4, Math.ceil(initialPositions / CHUNK)));
  }

  /** A run of `length` (≥ 1) fresh positions owned by `seg`; returns its first position. */
  allocate(length: number, seg: number): number {
    const first = this.takeChunk(seg);
    let chunk = first;
    for (let n = CHUNK; n < length; n += CHUNK) {
      const c = this.takeChunk(seg);
      this.next[chunk] = c;
      chunk = c;
    }
    this.live += length;
    return first << SHIFT;
  }

  segOf(p: number): number {
    return this.segOfChunk[p >> SHIFT]!;
  }

  /** The position after `p` in its run. */
  after(p: number): number {
    return (p & (CHUNK - 1)) !== CHUNK - 1 ? p + 1 : this.next[p >> SHIFT]! << SHIFT;
  }

  /** The position `k` steps after `p`. */
  advance(p: number, k: number): number {
    let chunk = p >> SHIFT;
    let slot = (p & (CHUNK - 1)) + k;
    while (slot >= CHUNK) {
      chunk = this.next[chunk]!;
      slot -= CHUNK;
    }
    return (chunk << SHIFT) | slot;
  }

  /** Hands the chunks of the run of `length` positions from `start` to `seg`. */
  relabel(start: number, length: number, seg: number): void {
    let chunk = start >> SHIFT;
    for (let n = chunksOf(start, length); n > 0; n--) {
      this.segOfChunk[chunk] = seg;
      chunk = this.next[chunk]!;
    }
  }

  /** Frees the chunks of the run of `length` positions from `start` (which its segment owns). */
  release(start: number, length: number): void {
    this.live -= length;
    this.freeChunks(start >> SHIFT, chunksOf(start, length));
  }

  /**
   * Frees the chunks that only the last `moved` positions of a run used, after they moved out;
   * `last` is the run's last remaining position, whose chunk stays.
   */
  trim(last: number, moved: number): void {
    const spare = CHUNK - 1 - (last & (CHUNK - 1));
    if (moved <= spare) return;
    this.freeChunks(this.next[last >> SHIFT]!, Math.ceil((moved - spare) / CHUNK));
  }

  /** Frees the chunks that only the first `moved` positions of the run from `start` used, after they moved out. */
  trimFront(start: number, moved: number): void {
    this.freeChunks(start >> SHIFT, ((start & (CHUNK - 1)) + moved) >> SHIFT);
  }

  private freeChunks(first: number, count: number): void {
    let chunk = first;
    for (let n = count; n > 0; n--) {
      const following = this.next[chunk]!;
      this.next[chunk] = this.freeHead;
      this.freeHead = chunk;
      chunk = following;
    }
    this.chunks -= count;
  }

  private takeChunk(seg: number): number {
    let chunk = this.freeHead;
    if (chunk !== NONE) this.freeHead = this.next[chunk]!;
    else {
      if (this.used === this.capacity) this.grow(this.capacity + (this.capacity >> 1));
      chunk = this.used++;
    }
    this.next[chunk] = NONE;
    this.segOfChunk[chunk] = seg;
    this.chunks++;
    return chunk;
  }

  /** Grows by half, not double: the words are most of a tracker's memory. */
  private grow(chunks: number): void {
    this.words = resized(this.words, new Uint32Array(chunks * CHUNK * 2));
    this.segOfChunk = resized(this.segOfChunk, new Int32Array(chunks));
    this.next = resized(this.next, new Int32Array(chunks));
    this.capacity = chunks;
  }
}

/** Chunks touched by the run of `length` positions from `start`. */
function chunksOf(start: number, length: number): number {
  return Math.ceil(((start & (CHUNK - 1)) + length) / CHUNK);
}

function resized<T extends Uint32Array | Int32Array>(old: T, next: T): T {
  next.set(old);
  return next;
}
