/**
 * Orderings of listed rows. Names compare by UTF-8 bytes, as Dynamo's Rust `String` ordering does:
 * JS `<` compares UTF-16 units, which puts astral characters (surrogates, 0xD800..) before
 * U+E000..U+FFFF although their UTF-8 bytes sort after.
 */

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

export interface RankRow {
  worker_id: bigint;
  dp_rank: number;
}

export function compareRank(a: RankRow, b: RankRow): number {
  return compareBigint(a.worker_id, b.worker_id) || a.dp_rank - b.dp_rank;
}

export interface TrackerRow {
  model_name: string;
  tenant_id: string;
}

export function compareTracker(a: TrackerRow, b: TrackerRow): number {
  return compareUtf8(a.model_name, b.model_name) || compareUtf8(a.tenant_id, b.tenant_id);
}
