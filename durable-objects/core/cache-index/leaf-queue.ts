/**
 * The event index's eviction order: its leaves (entries without children on their rank), oldest
 * first by age, ties in the order they joined. An entry joins when it is created, when a re-store
 * makes it newer, and when its last child goes; it leaves when it gains a child or goes itself.
 * Only leaves are queued, so what the cap takes is always a leaf and a rank's prefix never has a
 * hole; an inner entry waits, with its age (`age-table.ts`), for its subtree to go first.
 *
 * One group per distinct age, as the approximate index's deadline groups (`deadline-groups.ts`,
 * reused here for its heap of groups): a group's list is in joining order, so the oldest leaf is
 * the head of the earliest group. Each queued leaf has a place here, a record of four words (its
 * entry, its group, the next and previous places of the group's list), and its entry's `AGE` word
 * names the place as `~place` (`event-entries.ts`). Places are kept apart from the entries because
 * leaves are few: a prompt's chain has one, so a link word in every record would be mostly unused.
 * Join and leave are O(1) plus O(log groups) when a group opens or empties.
 */
import { grown, NONE, nextCapacity } from "./arrays";
import { DeadlineGroups } from "./deadline-groups";
import { AGE, ENTRY_WORDS, type EventEntries } from "./event-entries";

const ENTRY = 0;
const GROUP = 1;
const NEXT = 2;
const PREV = 3;
const PLACE_WORDS = 4;

export class LeafQueue {
  private readonly groups = new DeadlineGroups();
  private tail = new Int32Array(this.groups.capacity);
  /** Place `p`'s record is `places[4p .. 4p + 4)`; a free place's `NEXT` chains the free ones. */
  private places = new Int32Array(64 * PLACE_WORDS);
  private freePlace = NONE;
  private usedPlaces = 0;
  /** The group `join` used last, with its age: a run's entries share one, and a Map lookup per entry was a sixth of storing. */
  private lastGroup = NONE;
  private lastAge = 0;

  constructor(private readonly entries: EventEntries) {}

  /** Appends leaf `e` to the group of `age`; `e`'s `AGE` word then names its place. */
  join(e: number, age: number): void {
    const groups = this.groups;
    let g = this.lastGroup;
    if (g === NONE || this.lastAge !== age) {
      g = groups.intern(age);
      this.lastGroup = g;
      this.lastAge = age;
    }
    if (this.tail.length < groups.capacity) this.tail = grown(this.tail, groups.capacity);
    const p = this.allocate();
    const q = this.places;
    const o = p * PLACE_WORDS;
    const last = groups.head[g] === NONE ? NONE : this.tail[g]!;
    q[o + ENTRY] = e;
    q[o + GROUP] = g;
    q[o + NEXT] = NONE;
    q[o + PREV] = last;
    if (last === NONE) groups.head[g] = p;
    else q[last * PLACE_WORDS + NEXT] = p;
    this.tail[g] = p;
    this.entries.words[e * ENTRY_WORDS + AGE] = ~p;
  }

  /** Takes leaf `e` out of its group and frees its place (its `AGE` word is the caller's again); returns its age. */
  leave(e: number): number {
    const groups = this.groups;
    const q = this.places;
    const p = ~this.entries.words[e * ENTRY_WORDS + AGE]!;
    const o = p * PLACE_WORDS;
    const g = q[o + GROUP]!;
    const age = groups.deadline[g]!;
    const next = q[o + NEXT]!;
    const prev = q[o + PREV]!;
    if (prev === NONE) groups.head[g] = next;
    else q[prev * PLACE_WORDS + NEXT] = next;
    if (next === NONE) this.tail[g] = prev;
    else q[next * PLACE_WORDS + PREV] = prev;
    if (groups.head[g] === NONE) {
      groups.release(g);
      if (g === this.lastGroup) this.lastGroup = NONE;
    }
    q[o + NEXT] = this.freePlace;
    this.freePlace = p;
    return age;
  }

  /** The age of queued leaf `e`. */
  ageOf(e: number): number {
    const p = ~this.entries.words[e * ENTRY_WORDS + AGE]!;
    return this.groups.deadline[this.places[p * PLACE_WORDS + GROUP]!]!;
  }

  /** The oldest leaf, or -1 when there is none. */
  oldest(): number {
    const g = this.groups.earliest();
    return g === NONE ? NONE : this.places[this.groups.head[g]! * PLACE_WORDS + ENTRY]!;
  }

  /** Ages held by queued leaves. */
  get size(): number {
    return this.groups.size;
  }

  get bytes(): number {
    return this.groups.bytes + this.tail.byteLength + this.places.byteLength;
  }

  private allocate(): number {
    let p = this.freePlace;
    if (p !== NONE) {
      this.freePlace = this.places[p * PLACE_WORDS + NEXT]!;
      return p;
    }
    if (this.usedPlaces * PLACE_WORDS === this.places.length) {
      this.places = grown(this.places, nextCapacity(this.usedPlaces) * PLACE_WORDS);
    }
    p = this.usedPlaces++;
    return p;
  }
}
