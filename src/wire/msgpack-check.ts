/**
 * What `@msgpack/msgpack` lets through and the JSON path does not: a `str` whose bytes are not UTF-8
 * (short ones decode byte by byte, long ones with U+FFFD, so two different ids can become one string,
 * and a lone surrogate would not survive SQLite), and a map that repeats a key (the decoder keeps the
 * last value; JSON bodies with a repeated key are refused). One pass over the bytes, no recursion.
 * Anything else that is malformed stops the walk and is left to the decoder, which words its errors.
 */

const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Open containers: items still to read, and for maps the keys seen (keys and values alternate). */
interface Frame {
  left: number;
  keys: Set<string> | null;
}

const SKIP = 0;
const STR = 1;
const EXT = 2;
const ARRAY = 3;
const MAP = 4;

/** Types with a length field, by first byte: kind × 8 + the field's width in bytes. */
const SIZED = new Uint8Array(256);
for (const [b, kind, width] of [
  [0xc4, SKIP, 1],
  [0xc5, SKIP, 2],
  [0xc6, SKIP, 4],
  [0xc7, EXT, 1],
  [0xc8, EXT, 2],
  [0xc9, EXT, 4],
  [0xd9, STR, 1],
  [0xda, STR, 2],
  [0xdb, STR, 4],
  [0xdc, ARRAY, 2],
  [0xdd, ARRAY, 4],
  [0xde, MAP, 2],
  [0xdf, MAP, 4],
] as const) {
  SIZED[b] = kind * 8 + width;
}

/** Payload bytes of fixed-size types by first byte (floats, integers, fixext with its type byte), + 1. */
const FIXED = new Uint8Array(256);
for (const [b, size] of [
  [0xca, 4],
  [0xcb, 8],
  [0xcc, 1],
  [0xcd, 2],
  [0xce, 4],
  [0xcf, 8],
  [0xd0, 1],
  [0xd1, 2],
  [0xd2, 4],
  [0xd3, 8],
  [0xd4, 2],
  [0xd5, 3],
  [0xd6, 5],
  [0xd7, 9],
  [0xd8, 17],
] as const) {
  FIXED[b] = size + 1;
}

/** Throws an `Error` naming the first string that is not UTF-8 or the first repeated map key. */
export function checkMsgpack(bytes: Uint8Array): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const stack: Frame[] = [];
  let frame: Frame | undefined;
  let pos = 0;
  while (pos < bytes.length) {
    const b = bytes[pos++]!;
    let kind = SKIP;
    let n = 0;
    if (b <= 0x7f || b >= 0xe0 || b === 0xc0 || b === 0xc2 || b === 0xc3) n = 0;
    else if (b <= 0x8f) [kind, n] = [MAP, b & 0x0f];
    else if (b <= 0x9f) [kind, n] = [ARRAY, b & 0x0f];
    else if (b <= 0xbf) [kind, n] = [STR, b & 0x1f];
    else if (FIXED[b] !== 0) n = FIXED[b]! - 1;
    else {
      const sized = SIZED[b]!;
      const width = sized & 7;
      if (sized === 0 || pos + width > bytes.length) return;
      kind = sized >> 3;
      n = width === 1 ? view.getUint8(pos) : width === 2 ? view.getUint16(pos) : view.getUint32(pos);
      pos += width;
    }
    if (kind === STR) {
      if (pos + n > bytes.length) return;
      let text: string;
      try {
        text = UTF8.decode(bytes.subarray(pos, pos + n));
      } catch {
        throw new Error(`string at byte ${pos} is not valid UTF-8`);
      }
      if (frame?.keys && frame.left % 2 === 0) {
        if (frame.keys.has(text)) throw new Error(`duplicate key ${JSON.stringify(text)}`);
        frame.keys.add(text);
      }
      pos += n;
    } else if (kind === SKIP || kind === EXT) {
      pos += kind === EXT ? n + 1 : n;
    }
    if (frame) frame.left--;
    if ((kind === ARRAY || kind === MAP) && n > 0) {
      frame = { left: kind === MAP ? 2 * n : n, keys: kind === MAP ? new Set() : null };
      stack.push(frame);
    }
    while (frame && frame.left === 0) {
      stack.pop();
      frame = stack[stack.length - 1];
    }
  }
}
