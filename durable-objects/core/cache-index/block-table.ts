/**
 * The distinct blocks some rank holds, each keyed by (sequence hash, local hash, parent sequence hash,
 * position) and stored as u32 words in typed arrays: 32 bytes a block plus its hash slot, no object
 * or bigint per block. The parent of position 0 is stored as 0 (the position tells it has none).
 * Each block heads the list of its holders (`head`, through the entries' `byBlock` links); a block
 * lives while some rank holds it. Free ids are chained through `position`.
 */
import { finish, IdTable, mix } from "./id-table";
import { grown, NONE, nextCapacity } from "./links";

/** Word offsets of a block's key in `words`: its sequence, local and parent hashes, low word first. */
const SEQ = 0;
const LOCAL = 2;
const PARENT = 4;
/** u32 words per block in `words`. */
export const BLOCK_WORDS = 6;

export class BlockTable {
  /** Per block: seq lo, seq hi, local lo, local hi, parent lo, parent hi. */
  words: Uint32Array;
  position: Uint32Array;
  /** First holder entry of each block, or -1 for a free id. */
  head: Int32Array;
  capacity: number;
  size = 0;
  private table: IdTable;
  private used = 0;
  private freeHead = NONE;

  constructor(
    private readonly seed: number,
    initialCapacity = 1024,
  ) {
    this.capacity = initialCapacity;
    this.words = new Uint32Array(initialCapacity * BLOCK_WORDS);
    this.position = new Uint32Array(initialCapacity);
    this.head = new Int32Array(initialCapacity).fill(NONE);
    this.table = new IdTable((b) => this.hashAt(b), initialCapacity);
  }

  /**
   * The block of position `pos` of a prompt whose hashes are given as u32 word pairs (`seq[2i]` low,
   * `seq[2i + 1]` high), or -1; its parent is the prompt's previous sequence hash.
   */
  find(seq: Uint32Array, local: Uint32Array, pos: number): number {
    const table = this.table;
    for (let s = table.home(this.hashOf(seq, local, pos)); ; s = table.next(s)) {
      const b = table.at(s);
      if (b === NONE || this.matches(b, seq, local, pos)) return b;
    }
  }

  /** The block of position `pos` (as `find`), created with no holders if absent. */
  intern(seq: Uint32Array, local: Uint32Array, pos: number): number {
    const table = this.table;
    let s = table.home(this.hashOf(seq, local, pos));
    for (; ; s = table.next(s)) {
      const b = table.at(s);
      if (b === NONE) break;
      if (this.matches(b, seq, local, pos)) return b;
    }
    const b = this.allocate();
    const w = this.words;
    const o = b * BLOCK_WORDS;
    w[o + SEQ] = seq[2 * pos]!;
    w[o + SEQ + 1] = seq[2 * pos + 1]!;
    w[o + LOCAL] = local[2 * pos]!;
    w[o + LOCAL + 1] = local[2 * pos + 1]!;
    w[o + PARENT] = pos > 0 ? seq[2 * pos - 2]! : 0;
    w[o + PARENT + 1] = pos > 0 ? seq[2 * pos - 1]! : 0;
    this.position[b] = pos;
    table.fill(s, b);
    return b;
  }

  /** Frees block `b`, which no rank holds any more. */
  release(b: number): void {
    this.table.delete(b);
    this.position[b] = this.freeHead === NONE ? 0 : this.freeHead + 1;
    this.freeHead = b;
    this.size--;
  }

  sequenceHash(b: number): bigint {
    return this.wordsAt(b, SEQ);
  }

  localHash(b: number): bigint {
    return this.wordsAt(b, LOCAL);
  }

  parentHash(b: number): bigint {
    return this.wordsAt(b, PARENT);
  }

  get bytes(): number {
    return this.words.byteLength + this.position.byteLength + this.head.byteLength + this.table.bytes;
  }

  private allocate(): number {
    let b = this.freeHead;
    if (b !== NONE) {
      const after = this.position[b]!;
      this.freeHead = after === 0 ? NONE : after - 1;
    } else {
      if (this.used === this.capacity) this.grow(nextCapacity(this.capacity));
      b = this.used++;
    }
    this.head[b] = NONE;
    this.size++;
    return b;
  }

  private grow(capacity: number): void {
    this.words = grown(this.words, capacity * BLOCK_WORDS);
    this.position = grown(this.position, capacity);
    this.head = grown(this.head, capacity);
    this.head.fill(NONE, this.capacity);
    this.capacity = capacity;
  }

  private matches(b: number, seq: Uint32Array, local: Uint32Array, pos: number): boolean {
    const w = this.words;
    const o = b * BLOCK_WORDS;
    if (this.position[b] !== pos || w[o + SEQ] !== seq[2 * pos] || w[o + SEQ + 1] !== seq[2 * pos + 1]) {
      return false;
    }
    if (w[o + LOCAL] !== local[2 * pos] || w[o + LOCAL + 1] !== local[2 * pos + 1]) return false;
    return pos === 0 || (w[o + PARENT] === seq[2 * pos - 2] && w[o + PARENT + 1] === seq[2 * pos - 1]);
  }

  private hashOf(seq: Uint32Array, local: Uint32Array, pos: number): number {
    let h = mix(this.seed, seq[2 * pos]!);
    h = mix(h, seq[2 * pos + 1]!);
    h = mix(h, local[2 * pos]!);
    h = mix(h, local[2 * pos + 1]!);
    h = mix(h, pos > 0 ? seq[2 * pos - 2]! : 0);
    h = mix(h, pos > 0 ? seq[2 * pos - 1]! : 0);
    return finish(mix(h, pos));
  }

  /** `hashOf` of stored block `b`'s key: every part of the key, so no crafted family shares a probe run. */
  private hashAt(b: number): number {
    const w = this.words;
    const o = b * BLOCK_WORDS;
    let h = mix(this.seed, w[o + SEQ]!);
    h = mix(h, w[o + SEQ + 1]!);
    h = mix(h, w[o + LOCAL]!);
    h = mix(h, w[o + LOCAL + 1]!);
    h = mix(h, w[o + PARENT]!);
    h = mix(h, w[o + PARENT + 1]!);
    return finish(mix(h, this.position[b]!));
  }

  private wordsAt(b: number, offset: number): bigint {
    const o = b * BLOCK_WORDS + offset;
    return (BigInt(this.words[o + 1]!) << 32n) | BigInt(this.words[o]!);
  }
}
