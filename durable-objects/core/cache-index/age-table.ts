/**
 * The ages of the event index's inner entries (entries with children, which the leaf queue does not
 * hold), interned: each distinct age (epoch ms, exact) is one id, counted by the entries that have
 * it, and an entry keeps only the id, one int32 word. Entries stored by one call share its time, so
 * ids are far fewer than entries; an age and its id go when the last entry with it does.
 *
 * Why not the age in the record: a float64 is two words of every entry's record, where the id is
 * one, and the index's budget is 64 bytes an entry (`event-entries.ts`).
 */
import { grown, NONE, nextCapacity } from "./arrays";

export class AgeTable {
  private value = new Float64Array(64);
  private refs = new Int32Array(64);
  private byAge = new Map<number, number>();
  private free: number[] = [];
  private used = 0;
  /** The id `intern` gave last, with its age: a run's entries share one, and this spares the Map. */
  private lastId = NONE;
  private lastAge = 0;

  /** Distinct ages held. */
  get size(): number {
    return this.byAge.size;
  }

  /** The id of `age`, counted once more (created if no entry has that age). */
  intern(age: number): number {
    let id = this.lastId;
    if (id === NONE || this.lastAge !== age) {
      id = this.byAge.get(age) ?? this.create(age);
      this.lastId = id;
      this.lastAge = age;
    }
    this.refs[id]!++;
    return id;
  }

  /** The age of `id`. */
  ageOf(id: number): number {
    return this.value[id]!;
  }

  /** One entry fewer has the age of `id`; the last one frees it. */
  release(id: number): void {
    if (--this.refs[id]! !== 0) return;
    this.byAge.delete(this.value[id]!);
    this.free.push(id);
    if (id === this.lastId) this.lastId = NONE;
  }

  get bytes(): number {
    // Typed arrays, plus about 40 bytes per Map entry (its key is a heap number).
    return this.value.byteLength + this.refs.byteLength + this.byAge.size * 40;
  }

  private create(age: number): number {
    let id = this.free.pop();
    if (id === undefined) {
      if (this.used === this.value.length) {
        const capacity = nextCapacity(this.value.length);
        this.value = grown(this.value, capacity);
        this.refs = grown(this.refs, capacity);
      }
      id = this.used++;
    }
    this.value[id] = age;
    this.refs[id] = 0;
    this.byAge.set(age, id);
    return id;
  }
}
