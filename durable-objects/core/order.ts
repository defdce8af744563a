/**
 * UTF-8 facts about strings, as Dynamo's Rust `String` has them: byte length, and byte order (JS `<`
 * compares UTF-16 units, which puts astral characters before U+E000..U+FFFF although their UTF-8
 * bytes sort after). The core's and the Worker's listings (`src/http/order.ts`) all sort with these.
 */

const ENCODER = new TextEncoder();

export function utf8Bytes(text: string): number {
  // ASCII is one byte a unit; only other text needs encoding to be measured.
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) >= 0x80) return ENCODER.encode(text).length;
  }
  return text.length;
}

export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Lift surrogates above every BMP unit; at the first difference that restores code point order.
    if (x >= 0xd800 && x <= 0xdfff) x += 0x10000;
    if (y >= 0xd800 && y <= 0xdfff) y += 0x10000;
    return x - y;
  }
  return a.length - b.length;
}

export function compareBigint(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
