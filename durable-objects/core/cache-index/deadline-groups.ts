/**
 * The expiry queue: entries grouped by deadline (one group per distinct deadline, epoch ms), the
 * groups in a binary min-heap that knows each group's place. A booking's blocks share one deadline,
 * so a recording touches one group and the heap holds one item per recent booking time, not one per
 * entry. A renewed entry moves to its new group at once and an emptied group leaves the heap at once:
 * nothing stale is ever queued, so the heap's size is the number of live deadlines (at most one per
 * millisecond of the TTL window when origin times are whole ms), and expiry costs O(log groups) per
 * group plus O(1) per entry.
 */
import { grown, NONE, nextCapacity } from "./arrays";

export class DeadlineGroups {
  deadline: Float64Array;
  /** First entry of each group's list (through the entries' `byGroup` links). */
  head: Int32Array;
  /** Entries in each group. */
  count: Int32Array;
  /** 1 where a group's list may be out of eviction order (`eviction-order.ts`), else 0. */
  unordered: Uint8Array;
  capacity: number;
  private byDeadline = new Map<number, number>();
  private heap: Int32Array;
  /** Each group's index in `heap`. */
  private place: Int32Array;
  private heapSize = 0;
  private free: number[] = [];
  private used = 0;

  constructor(initialCapacity = 256) {
    this.capacity = initialCapacity;
    this.deadline = new Float64Array(initialCapacity);
    this.head = new Int32Array(initialCapacity).fill(NONE);
    this.count = new Int32Array(initialCapacity);
    this.unordered = new Uint8Array(initialCapacity);
    this.heap = new Int32Array(initialCapacity);
    this.place = new Int32Array(initialCapacity);
  }

  get size(): number {
    return this.heapSize;
  }

  /** The group of `deadline`, created empty if there is none. */
  intern(deadline: number): number {
    const known = this.byDeadline.get(deadline);
    if (known !== undefined) return known;
    let g = this.free.pop();
    if (g === undefined) {
      if (this.used === this.capacity) this.grow(nextCapacity(this.capacity));
      g = this.used++;
    }
    this.deadline[g] = deadline;
    this.head[g] = NONE;
    this.count[g] = 0;
    this.unordered[g] = 0;
    this.byDeadline.set(deadline, g);
    const i = this.heapSize++;
    this.heap[i] = g;
    this.place[g] = i;
    this.siftUp(i);
    return g;
  }

  /** The group of the earliest deadline, or -1. */
  earliest(): number {
    return this.heapSize > 0 ? this.heap[0]! : NONE;
  }

  /** Drops group `g`, which holds no entry any more. */
  release(g: number): void {
    this.byDeadline.delete(this.deadline[g]!);
    const i = this.place[g]!;
    const last = this.heap[--this.heapSize]!;
    if (last !== g) {
      this.heap[i] = last;
      this.place[last] = i;
      this.siftDown(i);
      this.siftUp(this.place[last]!);
    }
    this.free.push(g);
  }

  get bytes(): number {
    // Typed arrays, plus about 40 bytes per Map entry.
    return (
      this.deadline.byteLength +
      this.head.byteLength +
      this.count.byteLength +
      this.unordered.byteLength +
      this.heap.byteLength +
      this.place.byteLength +
      this.heapSize * 40
    );
  }

  private siftUp(i: number): void {
    const { heap, place, deadline } = this;
    const g = heap[i]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent]!;
      if (deadline[p]! <= deadline[g]!) break;
      heap[i] = p;
      place[p] = i;
      i = parent;
    }
    heap[i] = g;
    place[g] = i;
  }

  private siftDown(i: number): void {
    const { heap, place, deadline } = this;
    const n = this.heapSize;
    const g = heap[i]!;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && deadline[heap[child + 1]!]! < deadline[heap[child]!]!) child++;
      const c = heap[child]!;
      if (deadline[c]! >= deadline[g]!) break;
      heap[i] = c;
      place[c] = i;
      i = child;
    }
    heap[i] = g;
    place[g] = i;
  }

  private grow(capacity: number): void {
    this.deadline = grown(this.deadline, capacity);
    this.head = grown(this.head, capacity);
    this.count = grown(this.count, capacity);
    this.unordered = grown(this.unordered, capacity);
    this.heap = grown(this.heap, capacity);
    this.place = grown(this.place, capacity);
    this.capacity = capacity;
  }
}
