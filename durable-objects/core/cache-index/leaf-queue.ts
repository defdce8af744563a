/**
 * The event index's eviction order: its leaves (entries without children on their rank), oldest
 * first by age, ties in the order they joined. An entry joins when it is created, when a re-store
 * makes it newer, and when its last child goes; it leaves when it gains a child or goes itself.
 * Only leaves are queued, so what the cap takes is always a leaf and a rank's prefix never has a
 * hole; an inner entry waits, with its age, for its subtree to go first.
 *
 * One group per distinct age, as the approximate index's deadline groups (`deadline-groups.ts`,
 * reused here for its heap of groups): a group's list is in joining order, so the oldest leaf is
 * the head of the earliest group. The lists run through the entries' `QNEXT` / `QPREV` words
 * (`event-entries.ts`); this keeps their tails. Join and leave are O(1) plus O(log groups) when a
 * group opens or empties.
 */
import { grown, NONE } from "./arrays";
import { DeadlineGroups } from "./deadline-groups";
import { ENTRY_WORDS, type EventEntries, GROUP, QNEXT, QPREV } from "./event-entries";

export class LeafQueue {
  private readonly groups = new DeadlineGroups();
  private tail = new Int32Array(this.groups.capacity);
  /** The group `join` used last, with its age: a run's entries share one, and a Map lookup per entry was a sixth of storing. */
  private lastGroup = NONE;
  private lastAge = 0;

  constructor(private readonly entries: EventEntries) {}

  /** Appends leaf `e` to the group of `age`. */
  join(e: number, age: number): void {
    const groups = this.groups;
    let g = this.lastGroup;
    if (g === NONE || this.lastAge !== age) {
      g = groups.intern(age);
      this.lastGroup = g;
      this.lastAge = age;
    }
    if (this.tail.length < groups.capacity) this.tail = grown(this.tail, groups.capacity);
    const w = this.entries.words;
    const o = e * ENTRY_WORDS;
    const last = groups.head[g] === NONE ? NONE : this.tail[g]!;
    w[o + GROUP] = g;
    w[o + QNEXT] = NONE;
    w[o + QPREV] = last;
    if (last === NONE) groups.head[g] = e;
    else w[last * ENTRY_WORDS + QNEXT] = e;
    this.tail[g] = e;
  }

  /** Takes leaf `e` out of its group (its `GROUP` word then means nothing); returns its age. */
  leave(e: number): number {
    const groups = this.groups;
    const w = this.entries.words;
    const o = e * ENTRY_WORDS;
    const g = w[o + GROUP]!;
    const age = groups.deadline[g]!;
    const next = w[o + QNEXT]!;
    const prev = w[o + QPREV]!;
    if (prev === NONE) groups.head[g] = next;
    else w[prev * ENTRY_WORDS + QNEXT] = next;
    if (next === NONE) this.tail[g] = prev;
    else w[next * ENTRY_WORDS + QPREV] = prev;
    if (groups.head[g] === NONE) {
      groups.release(g);
      if (g === this.lastGroup) this.lastGroup = NONE;
    }
    w[o + GROUP] = NONE;
    return age;
  }

  /** The age of queued leaf `e`. */
  ageOf(e: number): number {
    return this.groups.deadline[this.entries.words[e * ENTRY_WORDS + GROUP]!]!;
  }

  /** The oldest leaf, or -1 when there is none. */
  oldest(): number {
    const g = this.groups.earliest();
    return g === NONE ? NONE : this.groups.head[g]!;
  }

  /** Ages held by queued leaves. */
  get size(): number {
    return this.groups.size;
  }

  get bytes(): number {
    return this.groups.bytes + this.tail.byteLength;
  }
}
