/**
 * A MessagePack writer that emits exactly what rmp_serde's `to_vec_named` does for the types the
 * replication codec uses (reference §5.5): unsigned integers in their smallest form (fixint, cc, cd,
 * ce, cf), strings as fixstr/str8/str16/str32, f64 as cb. One writer can be reused for many
 * outputs (`reset`; JS is single-threaded and encoding never yields), and `finish` copies out
 * exactly the bytes written, so a result never pins the larger working buffer.
 */

const TWO_32 = 0x1_0000_0000;
const INITIAL_BYTES = 4096;
/** A working buffer grown past this size is dropped at the next `reset` instead of kept. */
const MAX_RETAINED_BYTES = 1 << 20;
/** Word order of a u64 in a Uint32Array view of a BigUint64Array (platform byte order). */
const LO = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 0 : 1;
const HI = 1 - LO;

export class MsgpackWriter {
  buf = new Uint8Array(INITIAL_BYTES);
  pos = 0;
  private view = new DataView(this.buf.buffer);

  /** Starts a new output. */
  reset(): this {
    this.pos = 0;
    if (this.buf.length > MAX_RETAINED_BYTES) {
      this.buf = new Uint8Array(INITIAL_BYTES);
      this.view = new DataView(this.buf.buffer);
    }
    return this;
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  /** The bytes written, as a copy of exactly their length. */
  finish(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }

  byte(value: number): void {
    this.ensure(1);
    this.buf[this.pos++] = value;
  }

  nil(): void {
    this.ensure(1);
    this.buf[this.pos++] = 0xc0;
  }

  bool(value: boolean): void {
    this.ensure(1);
    this.buf[this.pos++] = value ? 0xc3 : 0xc2;
  }

  mapHeader(size: number): void {
    this.header(size, 0x80, 0xde, 0xdf);
  }

  arrayHeader(size: number): void {
    this.header(size, 0x90, 0xdc, 0xdd);
  }

  /** A non-negative safe integer, in the smallest form (what rmp_serde writes for u8..u64). */
  uint(value: number, what: string): void {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new Error(`event-codec: ${what} must be a non-negative safe integer, got ${value}`);
    }
    if (value < TWO_32) this.u64(0, value);
    else this.u64(Math.floor(value / TWO_32), value >>> 0);
  }

  /** A u32 field: as `uint`, bounded by 2^32 − 1. */
  u32(value: number, what: string): void {
    if (!(value < TWO_32)) throw new Error(`event-codec: ${what} must fit in a u32, got ${value}`);
    this.uint(value, what);
  }

  /** A u64 given as its high and low 32-bit words, in the smallest form. */
  u64(hi: number, lo: number): void {
    this.ensure(9);
    this.pos = putU64(this.buf, this.pos, hi, lo);
  }

  /** An array of u64 from their 32-bit words, each in the smallest form, with no bigint made. */
  u64Array(values: BigUint64Array): void {
    const n = values.length;
    this.arrayHeader(n);
    this.ensure(9 * n);
    const words = new Uint32Array(values.buffer, values.byteOffset, 2 * n);
    const b = this.buf;
    let p = this.pos;
    for (let i = 0; i < 2 * n; i += 2) p = putU64(b, p, words[i + HI]!, words[i + LO]!);
    this.pos = p;
  }

  /** A u64 held as a bigint (one per event, never per hash). */
  bigU64(value: bigint, what: string): void {
    if (value < 0n || value > 0xffff_ffff_ffff_ffffn) throw new Error(`event-codec: ${what} is not a u64`);
    if (value < 0x1_0000_0000n) this.u64(0, Number(value));
    else this.u64(Number(value >> 32n), Number(value & 0xffff_ffffn));
  }

  f64(value: number): void {
    this.ensure(9);
    this.buf[this.pos] = 0xcb;
    this.view.setFloat64(this.pos + 1, value);
    this.pos += 9;
  }

  /** A UTF-8 string; lone surrogates become U+FFFD, as `TextEncoder` writes them. */
  str(value: string): void {
    const n = value.length;
    let ascii = true;
    for (let i = 0; i < n; i++) {
      if (value.charCodeAt(i) >= 0x80) {
        ascii = false;
        break;
      }
    }
    const bytes = ascii ? n : utf8Length(value);
    if (bytes < 32) {
      this.ensure(1 + bytes);
      this.buf[this.pos++] = 0xa0 | bytes;
    } else this.header(bytes, -1, 0xda, 0xdb, 0xd9);
    this.ensure(bytes);
    const b = this.buf;
    let p = this.pos;
    if (ascii) for (let i = 0; i < n; i++) b[p++] = value.charCodeAt(i);
    else p = putUtf8(b, p, value);
    this.pos = p;
  }

  /** Bytes already encoded as MessagePack (spliced as they are). */
  raw(bytes: Uint8Array): void {
    const n = bytes.length;
    this.ensure(n);
    // `set` has a fixed cost that a loop beats for the short runs of the event layout.
    if (n > 64) this.buf.set(bytes, this.pos);
    else for (let i = 0, b = this.buf, p = this.pos; i < n; i++) b[p + i] = bytes[i]!;
    this.pos += n;
  }

  /** A length header: `fix` form below 16 (32 for strings via `str`), else 8-, 16- or 32-bit. */
  private header(size: number, fix: number, h16: number, h32: number, h8 = -1): void {
    this.ensure(5);
    const b = this.buf;
    if (fix >= 0 && size < 16) b[this.pos++] = fix | size;
    else if (h8 >= 0 && size < 0x100) {
      b[this.pos++] = h8;
      b[this.pos++] = size;
    } else if (size < 0x10000) {
      b[this.pos++] = h16;
      b[this.pos++] = size >>> 8;
      b[this.pos++] = size & 0xff;
    } else if (size < TWO_32) {
      b[this.pos++] = h32;
      this.pos = put32(b, this.pos, size);
    } else throw new Error(`event-codec: length ${size} does not fit MessagePack`);
  }
}

/** Writes a u64 (as 32-bit words) in rmp_serde's smallest form at `p`; returns the next position. */
function putU64(b: Uint8Array, p: number, hi: number, lo: number): number {
  if (hi !== 0) {
    b[p++] = 0xcf;
    return put32(b, put32(b, p, hi), lo);
  }
  if (lo < 0x80) {
    b[p] = lo;
    return p + 1;
  }
  if (lo < 0x100) {
    b[p] = 0xcc;
    b[p + 1] = lo;
    return p + 2;
  }
  if (lo < 0x10000) {
    b[p] = 0xcd;
    b[p + 1] = lo >>> 8;
    b[p + 2] = lo & 0xff;
    return p + 3;
  }
  b[p] = 0xce;
  return put32(b, p + 1, lo);
}

function put32(b: Uint8Array, p: number, v: number): number {
  b[p] = v >>> 24;
  b[p + 1] = (v >>> 16) & 0xff;
  b[p + 2] = (v >>> 8) & 0xff;
  b[p + 3] = v & 0xff;
  return p + 4;
}

/** The code point at `i`, with a lone surrogate read as U+FFFD. */
function codePointAt(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c < 0xd800 || c > 0xdfff) return c;
  if (c <= 0xdbff && i + 1 < s.length) {
    const d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
  }
  return 0xfffd;
}

function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const cp = codePointAt(s, i);
    if (cp >= 0x10000) i++;
    n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return n;
}

function putUtf8(b: Uint8Array, p: number, s: string): number {
  for (let i = 0; i < s.length; i++) {
    const cp = codePointAt(s, i);
    if (cp < 0x80) b[p++] = cp;
    else if (cp < 0x800) {
      b[p++] = 0xc0 | (cp >>> 6);
      b[p++] = 0x80 | (cp & 0x3f);
    } else if (cp < 0x10000) {
      b[p++] = 0xe0 | (cp >>> 12);
      b[p++] = 0x80 | ((cp >>> 6) & 0x3f);
      b[p++] = 0x80 | (cp & 0x3f);
    } else {
      i++;
      b[p++] = 0xf0 | (cp >>> 18);
      b[p++] = 0x80 | ((cp >>> 12) & 0x3f);
      b[p++] = 0x80 | ((cp >>> 6) & 0x3f);
      b[p++] = 0x80 | (cp & 0x3f);
    }
  }
  return p;
}
