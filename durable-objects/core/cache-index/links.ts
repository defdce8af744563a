/**
 * Intrusive doubly linked lists of entries, one list per owner (a block's holders, a rank's entries,
 * a deadline group's entries): `next`/`prev` per entry here, the heads in the owner's `head` array
 * (-1: empty). An entry is in at most one list of each `Links`. Insertion is at the head, removal
 * O(1); both keep no garbage.
 */

export const NONE = -1;

export class Links {
  next: Int32Array;
  prev: Int32Array;

  constructor(capacity: number) {
    this.next = new Int32Array(capacity);
    this.prev = new Int32Array(capacity);
  }

  grow(capacity: number): void {
    this.next = grown(this.next, capacity);
    this.prev = grown(this.prev, capacity);
  }

  push(head: Int32Array, owner: number, e: number): void {
    const first = head[owner]!;
    this.next[e] = first;
    this.prev[e] = NONE;
    if (first !== NONE) this.prev[first] = e;
    head[owner] = e;
  }

  unlink(head: Int32Array, owner: number, e: number): void {
    const n = this.next[e]!;
    const p = this.prev[e]!;
    if (p !== NONE) this.next[p] = n;
    else head[owner] = n;
    if (n !== NONE) this.prev[n] = p;
  }

  get bytes(): number {
    return this.next.byteLength + this.prev.byteLength;
  }
}

/** `old`'s values in a longer array (same type); new slots are 0. */
export function grown<T extends Int32Array | Uint32Array | Float64Array>(old: T, length: number): T {
  const next = new (old.constructor as new (n: number) => T)(length);
  next.set(old);
  return next;
}

/** Capacity growth by half: these arrays are most of the index's memory. */
export function nextCapacity(capacity: number): number {
  return capacity + Math.max(16, capacity >> 1);
}
