/**
 * The distinct blocks some rank holds, each keyed by (sequence hash, local hash, parent sequence hash,
 * position). A block is one record of 8 int32 words (32 bytes, two to a cache line) holding its key
 * and the head of its holders' list, so the lookup that finds it and the overlap walk that starts
 * from it read one line: at a million blocks the records are far out of cache and every extra line
 * is a memory access. No object or bigint per block; the parent of position 0 is stored as 0 (the
 * position tells it has none). A block lives while some rank holds it; a free id has position -1
 * and chains the free ids through its head word.
 *
 * Lookups take a hint: the block a caller expects, checked before the hash table. A recording
 * creates its blocks with consecutive ids (free ids come back in ascending order too, as a group is
 * drained from its newest entry), so the block after block `b` in a prompt is usually `b + 1`, in
 * the same cache line or the next: a walk along a recorded prompt then reads memory in order
 * instead of twice at random per block.
 *
 * Hashes are handled as int32 word pairs (low word first), as `Int32Array` views of the prompt's
 * `BigUint64Array`s give them: the bits are what is compared, the sign of a word means nothing.
 *
 * Keyed by sequence hash alone (`keyOnLocal` false), a block is (sequence hash, parent, position)
 * and its local hash is what it carries, not part of its key: bookings known only by their sequence
 * hashes (the slot-tracker API's) then meet bookings of the same chain made from tokens. Such a
 * booking passes its sequence hashes as its local ones; a block holds the first local hash recorded
 * that differs from its sequence hash (a real one), else its sequence hash. Real local hashes of one
 * (sequence, parent, position) agree whenever the chain is Dynamo's (each sequence hash hashes its
 * parent with its local hash), so what a block carries does not depend on the order of recordings.
 */
import { grown, NONE, nextCapacity } from "./arrays";
import { EMPTY, finish, IdTable, mix } from "./id-table";

/** Words of a block record: sequence, local and parent hashes (low word first), position, head. */
const SEQ = 0;
const LOCAL = 2;
const PARENT = 4;
const POSITION = 6;
/** The first holder entry (through the entries' block links), or -1; a free id's next free id. */
export const HEAD = 7;
export const BLOCK_WORDS = 8;

export class BlockTable {
  /** Block `b`'s record is `words[8b .. 8b + 8)`. */
  words: Int32Array;
  capacity: number;
  size = 0;
  /** Whether the last `intern` created its block (then no rank holds it yet). */
  created = false;
  private table: IdTable;
  private used = 0;
  private freeHead = NONE;
  /** Key hashes of the prompt last `prepare`d, by position. */
  private keyHashes = new Int32Array(128);
  /** Blocks released but still in the table, as (id, key hash) pairs, until `settle`. */
  private released = new Int32Array(256);
  private releasedCount = 0;
  /** What the read-ahead loops read: kept, and public, so that no compiler drops the reads. */
  readAhead = 0;

  constructor(
    private readonly seed: number,
    initialCapacity = 1024,
    /** Whether the local hash is part of a block's key (else the block carries it). */
    private readonly keyOnLocal = true,
  ) {
    this.capacity = initialCapacity;
    this.words = new Int32Array(initialCapacity * BLOCK_WORDS);
    this.table = new IdTable(initialCapacity);
  }

  /**
   * The block of position `pos` of a prompt given as word pairs (`seq[2i]` low, `seq[2i + 1]` high),
   * or -1; its parent is the prompt's previous sequence hash. `hint` is a block to try first.
   */
  find(seq: Int32Array, local: Int32Array, pos: number, hint = NONE): number {
    if (this.hints(hint, seq, local, pos)) return hint;
    const table = this.table;
    const hash = this.hashOfPrompt(seq, local, pos);
    for (let s = table.home(hash); ; s = table.next(s)) {
      const b = table.candidate(s, hash);
      if (b === EMPTY) return NONE;
      if (b >= 0 && this.matches(b, seq, local, pos)) return b;
    }
  }

  /**
   * The key hashes of positions [from, n) of a prompt, for `intern`, with the table's slot of each
   * read ahead (`IdTable.touch`); the positions before `from` are left as they were (a caller that
   * found those blocks already needs no hash for them). The array is reused by the next call.
   */
  prepare(seq: Int32Array, local: Int32Array, n: number, from = 0): Int32Array {
    if (this.keyHashes.length < n) this.keyHashes = new Int32Array(n);
    const hashes = this.keyHashes;
    for (let i = from; i < n; i++) hashes[i] = this.hashOfPrompt(seq, local, i);
    let read = 0;
    for (let i = from; i < n; i++) read ^= this.table.touch(hashes[i]!);
    this.readAhead = read;
    return hashes;
  }

  /**
   * The block of position `pos` (as `find`), created with no holders if absent (see `created`);
   * `hash` is its key's, as `prepare` gives it.
   */
  intern(
    seq: Int32Array,
    local: Int32Array,
    pos: number,
    hint = NONE,
    hash = this.hashOfPrompt(seq, local, pos),
  ): number {
    if (this.hints(hint, seq, local, pos)) return this.found(hint, seq, local, pos);
    const table = this.table;
    let s = table.home(hash);
    for (; ; s = table.next(s)) {
      const found = table.candidate(s, hash);
      if (found === EMPTY) break;
      if (found >= 0 && this.matches(found, seq, local, pos)) return this.found(found, seq, local, pos);
    }
    this.created = true;
    const b = this.allocate();
    const w = this.words;
    const o = b * BLOCK_WORDS;
    w[o + SEQ] = seq[2 * pos]!;
    w[o + SEQ + 1] = seq[2 * pos + 1]!;
    w[o + LOCAL] = local[2 * pos]!;
    w[o + LOCAL + 1] = local[2 * pos + 1]!;
    w[o + PARENT] = pos > 0 ? seq[2 * pos - 2]! : 0;
    w[o + PARENT + 1] = pos > 0 ? seq[2 * pos - 1]! : 0;
    w[o + POSITION] = pos;
    w[o + HEAD] = NONE;
    table.fill(s, b, hash);
    return b;
  }

  /**
   * Frees block `b`, which no rank holds any more. It is gone at once (its position is -1, which no
   * key matches), but leaves the table and the free list only at the next `settle`.
   */
  release(b: number): void {
    if (2 * this.releasedCount === this.released.length)
      this.released = grown(this.released, 2 * this.released.length);
    this.released[2 * this.releasedCount] = b;
    this.released[2 * this.releasedCount + 1] = this.hashOf(b);
    this.releasedCount++;
    this.words[b * BLOCK_WORDS + POSITION] = NONE;
    this.size--;
  }

  /**
   * Removes the blocks released since the last call from the table and frees their ids, in the
   * order of release. Deferred so that the table's slots are read ahead all together: eviction
   * releases a block per entry it drops, each a slot at random in a table far out of cache.
   * Until then a released block's slot stays, matched by no key, and its id is not reused.
   */
  settle(): void {
    const n = this.releasedCount;
    if (n === 0) return;
    const { released, table, words } = this;
    let read = 0;
    for (let k = 0; k < n; k++) read ^= table.touch(released[2 * k + 1]!);
    this.readAhead = read;
    for (let k = 0; k < n; k++) {
      const b = released[2 * k]!;
      table.delete(b, released[2 * k + 1]!);
      words[b * BLOCK_WORDS + HEAD] = this.freeHead;
      this.freeHead = b;
    }
    this.releasedCount = 0;
  }

  head(b: number): number {
    return this.words[b * BLOCK_WORDS + HEAD]!;
  }

  position(b: number): number {
    return this.words[b * BLOCK_WORDS + POSITION]!;
  }

  sequenceHash(b: number): bigint {
    return this.u64At(b, SEQ);
  }

  localHash(b: number): bigint {
    return this.u64At(b, LOCAL);
  }

  parentHash(b: number): bigint {
    return this.u64At(b, PARENT);
  }

  /** Compares two blocks' (sequence, local, parent) hashes as u64s, in that order. */
  compareHashes(a: number, b: number): number {
    const w = this.words;
    const oa = a * BLOCK_WORDS;
    const ob = b * BLOCK_WORDS;
    for (let k = SEQ; k <= PARENT; k += 2) {
      const hi = (w[oa + k + 1]! >>> 0) - (w[ob + k + 1]! >>> 0);
      if (hi !== 0) return hi;
      const lo = (w[oa + k]! >>> 0) - (w[ob + k]! >>> 0);
      if (lo !== 0) return lo;
    }
    return 0;
  }

  get bytes(): number {
    return this.words.byteLength + this.table.bytes;
  }

  private allocate(): number {
    let b = this.freeHead;
    if (b !== NONE) this.freeHead = this.words[b * BLOCK_WORDS + HEAD]!;
    else {
      if (this.used === this.capacity) this.grow(nextCapacity(this.capacity));
      b = this.used++;
    }
    this.size++;
    return b;
  }

  private grow(capacity: number): void {
    this.words = grown(this.words, capacity * BLOCK_WORDS);
    this.capacity = capacity;
  }

  /** An existing block `intern` returns; keyed by sequence alone, it takes a real local hash it lacks. */
  private found(b: number, seq: Int32Array, local: Int32Array, pos: number): number {
    this.created = false;
    if (this.keyOnLocal) return b;
    const lo = local[2 * pos]!;
    const hi = local[2 * pos + 1]!;
    if (lo === seq[2 * pos] && hi === seq[2 * pos + 1]) return b;
    const w = this.words;
    const o = b * BLOCK_WORDS;
    if (w[o + LOCAL] !== w[o + SEQ] || w[o + LOCAL + 1] !== w[o + SEQ + 1]) return b;
    w[o + LOCAL] = lo;
    w[o + LOCAL + 1] = hi;
    return b;
  }

  /** Whether `hint` is a live block with this key (a free block's position, -1, matches none). */
  hints(hint: number, seq: Int32Array, local: Int32Array, pos: number): boolean {
    return hint >= 0 && hint < this.used && this.matches(hint, seq, local, pos);
  }

  private matches(b: number, seq: Int32Array, local: Int32Array, pos: number): boolean {
    const w = this.words;
    const o = b * BLOCK_WORDS;
    if (w[o + POSITION] !== pos || w[o + SEQ] !== seq[2 * pos] || w[o + SEQ + 1] !== seq[2 * pos + 1]) {
      return false;
    }
    if (this.keyOnLocal && (w[o + LOCAL] !== local[2 * pos] || w[o + LOCAL + 1] !== local[2 * pos + 1])) {
      return false;
    }
    return pos === 0 || (w[o + PARENT] === seq[2 * pos - 2] && w[o + PARENT + 1] === seq[2 * pos - 1]);
  }

  /** Every part of the key is hashed, so that no crafted family of keys shares one probe run. */
  private hashOfPrompt(seq: Int32Array, local: Int32Array, pos: number): number {
    let h = mix(this.seed, seq[2 * pos]!);
    h = mix(h, seq[2 * pos + 1]!);
    if (this.keyOnLocal) {
      h = mix(h, local[2 * pos]!);
      h = mix(h, local[2 * pos + 1]!);
    }
    h = mix(h, pos > 0 ? seq[2 * pos - 2]! : 0);
    h = mix(h, pos > 0 ? seq[2 * pos - 1]! : 0);
    return finish(mix(h, pos));
  }

  /** `hashOfPrompt` of stored block `b`'s key, which its table slot was filed under. */
  private hashOf(b: number): number {
    const w = this.words;
    const o = b * BLOCK_WORDS;
    let h = mix(this.seed, w[o + SEQ]!);
    h = mix(h, w[o + SEQ + 1]!);
    if (this.keyOnLocal) {
      h = mix(h, w[o + LOCAL]!);
      h = mix(h, w[o + LOCAL + 1]!);
    }
    h = mix(h, w[o + PARENT]!);
    h = mix(h, w[o + PARENT + 1]!);
    return finish(mix(h, w[o + POSITION]!));
  }

  private u64At(b: number, offset: number): bigint {
    const o = b * BLOCK_WORDS + offset;
    return (BigInt(this.words[o + 1]! >>> 0) << 32n) | BigInt(this.words[o]! >>> 0);
  }
}
