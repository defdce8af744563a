/**
 * A strict MessagePack reader for the replication codec. Every read checks the bytes remaining
 * first, so truncated input throws instead of reading past the end, and a bogus length can never
 * make it allocate more than the input could hold or loop past the input's end: each element
 * consumes at least one byte.
 */
import { CodecError } from "./codec-error";
import { cachedString, decodeUtf8 } from "./utf8-strings";

const TWO_32 = 0x1_0000_0000;
/** Unknown values are skipped (forward compatibility), but only this deep. */
const MAX_SKIP_DEPTH = 8;

/** Word order of a u64 in a Uint32Array view of a BigUint64Array (platform byte order). */
const LO = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 0 : 1;
const HI = 1 - LO;

export class MsgpackReader {
  pos = 0;
  /** Words of the last `u64Words` read (kept here so that reading a hash allocates nothing). */
  hi = 0;
  lo = 0;
  /** Made on the first float read: most inputs have none. */
  private view: DataView | undefined;

  constructor(readonly bytes: Uint8Array) {}

  fail(what: string, expected: string, at = this.pos): never {
    const found = at < this.bytes.length ? `0x${this.bytes[at]!.toString(16).padStart(2, "0")}` : "the end";
    throw new CodecError(`event-codec: ${what}: expected ${expected} at byte ${at}, found ${found}`);
  }

  /** Throws unless `n` more bytes are there. */
  need(n: number, what: string): void {
    if (this.pos + n > this.bytes.length) {
      throw new CodecError(`event-codec: ${what}: truncated at byte ${this.pos} (needs ${n} more)`);
    }
  }

  done(): void {
    if (this.pos !== this.bytes.length) this.fail("input", "its end");
  }

  private byte(what: string): number {
    this.need(1, what);
    return this.bytes[this.pos++]!;
  }

  private be(n: 1 | 2 | 4, what: string): number {
    this.need(n, what);
    const p = this.pos;
    this.pos += n;
    const b = this.bytes;
    if (n === 1) return b[p]!;
    if (n === 2) return (b[p]! << 8) | b[p + 1]!;
    return ((b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!) >>> 0;
  }

  peekNil(): boolean {
    return this.bytes[this.pos] === 0xc0;
  }

  /** Consumes a nil if one is next. */
  nil(): boolean {
    if (!this.peekNil()) return false;
    this.pos++;
    return true;
  }

  bool(what: string): boolean {
    const b = this.byte(what);
    if (b === 0xc2 || b === 0xc3) return b === 0xc3;
    return this.fail(what, "a bool", this.pos - 1);
  }

  mapHeader(what: string): number {
    const b = this.byte(what);
    if ((b & 0xf0) === 0x80) return b & 0x0f;
    if (b === 0xde) return this.be(2, what);
    if (b === 0xdf) return this.be(4, what);
    return this.fail(what, "a map", this.pos - 1);
  }

  arrayHeader(what: string): number {
    const b = this.byte(what);
    if ((b & 0xf0) === 0x90) return b & 0x0f;
    if (b === 0xdc) return this.be(2, what);
    if (b === 0xdd) return this.be(4, what);
    return this.fail(what, "an array", this.pos - 1);
  }

  /** A string's byte length, or −1 (nothing consumed) when the next value is not a string. */
  private strLength(what: string): number {
    const b = this.byte(what);
    if ((b & 0xe0) === 0xa0) return b & 0x1f;
    if (b === 0xd9) return this.be(1, what);
    if (b === 0xda) return this.be(2, what);
    if (b === 0xdb) return this.be(4, what);
    this.pos--;
    return -1;
  }

  str(what: string): string {
    const n = this.strLength(what);
    if (n < 0) this.fail(what, "a string");
    this.need(n, what);
    const start = this.pos;
    this.pos += n;
    return decodeUtf8(this.bytes, start, n, what);
  }

  /**
   * A string that recurs (a map key, a replica name, a variant): short ones come from a cache, so
   * decoding an event does not build its two dozen key strings again each time.
   */
  key(what: string): string {
    const n = this.strLength(what);
    if (n < 0) this.fail(what, "a string");
    this.need(n, what);
    const b = this.bytes;
    const start = this.pos;
    this.pos += n;
    return cachedString(b, start, n, what);
  }

  /** A string, or `undefined` (nothing consumed) when the next value is not a string. */
  keyOrNot(what: string): string | undefined {
    if (this.pos >= this.bytes.length) return undefined;
    const b = this.bytes[this.pos]!;
    if ((b & 0xe0) === 0xa0 || (b >= 0xd9 && b <= 0xdb)) return this.key(what);
    return undefined;
  }

  /**
   * An array of u64 straight into a BigUint64Array through its 32-bit words, with no bigint made:
   * any integer form, negative ones as the bits of an i64 (as Dynamo's HTTP API reads i64 hashes).
   */
  hashes(what: string): BigUint64Array {
    const n = this.arrayHeader(what);
    // One byte at least per element: a bogus length fails here, before anything is allocated.
    this.need(n, what);
    const hashes = new BigUint64Array(n);
    const words = new Uint32Array(hashes.buffer);
    const b = this.bytes;
    for (let i = 0; i < 2 * n; i += 2) {
      const p = this.pos;
      const t = b[p]!;
      // Fixint and u64, the common forms, inline; `words` starts zeroed.
      if (t < 0x80) {
        words[i + LO] = t;
        this.pos = p + 1;
      } else if (t === 0xcf && p + 9 <= b.length) {
        words[i + HI] = ((b[p + 1]! << 24) | (b[p + 2]! << 16) | (b[p + 3]! << 8) | b[p + 4]!) >>> 0;
        words[i + LO] = ((b[p + 5]! << 24) | (b[p + 6]! << 16) | (b[p + 7]! << 8) | b[p + 8]!) >>> 0;
        this.pos = p + 9;
      } else {
        this.u64Words(what, true);
        words[i + HI] = this.hi;
        words[i + LO] = this.lo;
      }
    }
    return hashes;
  }

  /**
   * Any integer form into `hi`/`lo`. Unsigned forms give the value; with `signed`, negative forms
   * give the two's-complement bits of an i64, as Dynamo's HTTP API reinterprets i64 hashes.
   */
  u64Words(what: string, signed: boolean): void {
    const at = this.pos;
    const b = this.byte(what);
    let v: number;
    if (b < 0x80) v = b;
    else if (b === 0xcc) v = this.be(1, what);
    else if (b === 0xcd) v = this.be(2, what);
    else if (b === 0xce) v = this.be(4, what);
    else if (b === 0xcf || (b === 0xd3 && signed)) {
      this.hi = this.be(4, what);
      this.lo = this.be(4, what);
      return;
    } else if (!signed) this.fail(what, "an unsigned integer", at);
    else if (b >= 0xe0) v = b - 0x100;
    else if (b === 0xd0) v = (this.be(1, what) << 24) >> 24;
    else if (b === 0xd1) v = (this.be(2, what) << 16) >> 16;
    else if (b === 0xd2) v = this.be(4, what) | 0;
    else this.fail(what, "an integer", at);
    this.hi = v < 0 ? 0xffff_ffff : 0;
    this.lo = v >>> 0;
  }

  /** An unsigned integer up to `max` (at most 2^53 − 1), as a number. */
  uint(what: string, max = Number.MAX_SAFE_INTEGER): number {
    const at = this.pos;
    this.u64Words(what, false);
    const v = this.hi * TWO_32 + this.lo;
    if (this.hi >= 0x20_0000 || v > max) this.fail(what, `an integer up to ${max}`, at);
    return v;
  }

  u32(what: string): number {
    return this.uint(what, 0xffff_ffff);
  }

  /** An unsigned integer of any size, as a number (exact below 2^53). */
  uintApprox(what: string): number {
    this.u64Words(what, false);
    return this.hi * TWO_32 + this.lo;
  }

  bigU64(what: string): bigint {
    this.u64Words(what, false);
    return this.hi === 0 ? BigInt(this.lo) : (BigInt(this.hi) << 32n) | BigInt(this.lo);
  }

  /** A float (f64 or f32), or an integer read as one (serde's f64 accepts both). */
  f64(what: string): number {
    const b = this.bytes[this.pos];
    if (b === 0xcb) {
      this.need(9, what);
      this.pos += 9;
      return this.floats().getFloat64(this.pos - 8);
    }
    if (b === 0xca) {
      this.need(5, what);
      this.pos += 5;
      return this.floats().getFloat32(this.pos - 4);
    }
    if (b !== undefined && (b < 0x80 || (b >= 0xcc && b <= 0xcf))) return this.uintApprox(what);
    return this.fail(what, "a number");
  }

  private floats(): DataView {
    this.view ??= new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
    return this.view;
  }

  /** Skips one value of any type (an unknown field from a newer sender), no deeper than the limit. */
  skip(what: string, depth = 0): void {
    if (depth > MAX_SKIP_DEPTH) this.fail(what, `nesting at most ${MAX_SKIP_DEPTH} deep`);
    const at = this.pos;
    const b = this.byte(what);
    let items = 0;
    let bytes = 0;
    if (b < 0x80 || b >= 0xe0 || b === 0xc0 || b === 0xc2 || b === 0xc3) return;
    if ((b & 0xf0) === 0x80) items = 2 * (b & 0x0f);
    else if ((b & 0xf0) === 0x90) items = b & 0x0f;
    else if ((b & 0xe0) === 0xa0) bytes = b & 0x1f;
    else if (b === 0xc4 || b === 0xd9) bytes = this.be(1, what);
    else if (b === 0xc5 || b === 0xda) bytes = this.be(2, what);
    else if (b === 0xc6 || b === 0xdb) bytes = this.be(4, what);
    else if (b === 0xcc || b === 0xd0) bytes = 1;
    else if (b === 0xcd || b === 0xd1) bytes = 2;
    else if (b === 0xce || b === 0xd2 || b === 0xca) bytes = 4;
    else if (b === 0xcf || b === 0xd3 || b === 0xcb) bytes = 8;
    else if (b === 0xdc) items = this.be(2, what);
    else if (b === 0xdd) items = this.be(4, what);
    else if (b === 0xde) items = 2 * this.be(2, what);
    else if (b === 0xdf) items = 2 * this.be(4, what);
    else this.fail(what, "a value this codec knows (no extension types)", at);
    this.need(bytes, what);
    this.pos += bytes;
    for (let i = 0; i < items; i++) this.skip(what, depth + 1);
  }
}
