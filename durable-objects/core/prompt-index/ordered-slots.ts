/**
 * The slot arithmetic of the `ValueIndex`'s ordered table (Amble and Knuth, "Ordered hash
 * tables", 1974): the seeded hash of a value, the home slot a hash scales to, and removal by shifting
 * back only the entries displaced past the hole.
 */

/**
 * Seeded mix of a value's two halves, so structured hashes spread and crafted collisions cannot be
 * precomputed. Compared as signed 32-bit integers, which is the order `homeIn` keeps.
 */
export function valueHash(lo: number, hi: number, seed: number): number {
  let h = Math.imul(lo ^ Math.imul(hi ^ seed, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * Empties slot `slot` of `table`, shifting back the following entries whose home is at or before the
 * hole. Homes only grow along a run, so the first entry homed past the hole ends the shift: it and
 * all after it are found from homes beyond the hole.
 */
export function removeAt(table: Int32Array, slot: number, scale: number): void {
  let hole = slot;
  for (let next = hole + 1; ; next++) {
    const entry = table[2 * next]!;
    if (entry === 0) break;
    const hash = table[2 * next + 1]!;
    if (homeIn(hash, scale) > hole) break;
    table[2 * hole] = entry;
    table[2 * hole + 1] = hash;
    hole = next;
  }
  table[2 * hole] = 0;
}

/**
 * A hash's home slot: its offset from the smallest signed 32-bit value, as a fraction of 2^32, scaled
 * to the table (`scale` = slots / 2^32). Non-decreasing in the signed hash, which keeps the table in
 * hash order; exact enough, and deterministic.
 */
export function homeIn(hash: number, scale: number): number {
  return (((hash ^ -0x80000000) >>> 0) * scale) >>> 0;
}
