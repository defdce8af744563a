/**
 * The `leases` table: one row per owner whose lease has something to remember (`lease-table.ts`),
 * written by `TrackerStore.leaseSet` and deleted by `leaseCleared`.
 *
 * Encoding: `steps` is the staircase of unclipped grants as float64 little-endian pairs
 * (at, deadline), 16 bytes a grant; `cuts` the remembered cuts as float64 little-endian, 8 bytes a
 * cut (both epoch ms, exact in a double; an empty list is an empty BLOB). Two columns because they
 * change apart: a renewal moves the steps and never the cuts, a cut empties the steps.
 *
 * Cost: the rows remember what each holds, so a change writes only the columns that changed, as an
 * UPDATE of that one row. A renewal of one ttl replaces the single step by a later one: **one row
 * written**, `UPDATE leases SET steps = ? WHERE owner = ?` with a 16-byte value. Inside a grouped
 * call (a peer's batch of events, a `/batch`) changes of one owner are coalesced and written once
 * when the group ends, so a batch carrying fifty renewals of one lease writes one row too.
 */
import { Lease, type LeaseGrant, type LeaseState } from "../core/lease/lease-table";
import type { Write } from "./journal-entries";
import { GroupDepth } from "./row-groups";
import type { LeaseRow } from "./tracker-schema";

/** What a row holds, as comparable text: the steps and the cuts as they were last written. */
interface Written {
  steps: string;
  cuts: string;
}

export class LeaseRows {
  /** Rows in the table, by owner. */
  private readonly written = new Map<string, Written>();
  /** Changes of the open group, by owner: the lease to write (its state when the group ends), or null to delete. */
  private readonly pending = new Map<string, LeaseState | null>();
  private readonly groups = new GroupDepth();

  constructor(private readonly write: Write) {}

  /** Runs `fn` with its lease changes written once per owner when it returns. */
  group<T>(fn: () => T): T {
    return this.groups.run(fn, () => this.flush());
  }

  set(lease: LeaseState): void {
    if (this.groups.open) this.pending.set(lease.owner, lease);
    else this.writeRow(lease);
  }

  cleared(owner: string): void {
    if (this.groups.open) this.pending.set(owner, null);
    else this.deleteRow(owner);
  }

  /** The lease a stored row holds, remembered as written. */
  restore(row: LeaseRow): Lease {
    const lease = new Lease(row.owner);
    lease.steps = stepsOf(row.steps);
    lease.cuts = cutsOf(row.cuts);
    this.written.set(row.owner, { steps: textOf(lease.steps), cuts: lease.cuts.join() });
    return lease;
  }

  /** Forgets every row (the table was wiped). */
  forget(): void {
    this.written.clear();
    this.pending.clear();
  }

  private flush(): void {
    for (const [owner, lease] of this.pending) {
      if (lease) this.writeRow(lease);
      else this.deleteRow(owner);
    }
    this.pending.clear();
  }

  private writeRow(lease: LeaseState): void {
    const steps = textOf(lease.steps);
    const cuts = lease.cuts.join();
    const before = this.written.get(lease.owner);
    if (!before) {
      this.write(
        `INSERT INTO leases (owner, steps, cuts) VALUES (?, ?, ?)
           ON CONFLICT (owner) DO UPDATE SET steps = excluded.steps, cuts = excluded.cuts`,
        lease.owner,
        stepsBlob(lease.steps),
        cutsBlob(lease.cuts),
      );
    } else if (before.cuts === cuts) {
      if (before.steps === steps) return;
      this.write("UPDATE leases SET steps = ? WHERE owner = ?", stepsBlob(lease.steps), lease.owner);
    } else if (before.steps === steps) {
      this.write("UPDATE leases SET cuts = ? WHERE owner = ?", cutsBlob(lease.cuts), lease.owner);
    } else {
      this.write(
        "UPDATE leases SET steps = ?, cuts = ? WHERE owner = ?",
        stepsBlob(lease.steps),
        cutsBlob(lease.cuts),
        lease.owner,
      );
    }
    this.written.set(lease.owner, { steps, cuts });
  }

  private deleteRow(owner: string): void {
    if (!this.written.delete(owner)) return;
    this.write("DELETE FROM leases WHERE owner = ?", owner);
  }
}

function textOf(steps: readonly LeaseGrant[]): string {
  return steps.map((s) => `${s.at}:${s.deadline}`).join();
}

function stepsBlob(steps: readonly LeaseGrant[]): ArrayBuffer {
  const view = new DataView(new ArrayBuffer(steps.length * 16));
  steps.forEach((step, i) => {
    view.setFloat64(i * 16, step.at, true);
    view.setFloat64(i * 16 + 8, step.deadline, true);
  });
  return view.buffer;
}

function cutsBlob(cuts: readonly number[]): ArrayBuffer {
  const view = new DataView(new ArrayBuffer(cuts.length * 8));
  cuts.forEach((cut, i) => {
    view.setFloat64(i * 8, cut, true);
  });
  return view.buffer;
}

function stepsOf(blob: ArrayBuffer): LeaseGrant[] {
  const view = new DataView(blob);
  const steps: LeaseGrant[] = [];
  for (let at = 0; at + 16 <= blob.byteLength; at += 16) {
    steps.push({ at: view.getFloat64(at, true), deadline: view.getFloat64(at + 8, true) });
  }
  return steps;
}

function cutsOf(blob: ArrayBuffer): number[] {
  const view = new DataView(blob);
  const cuts: number[] = [];
  for (let at = 0; at + 8 <= blob.byteLength; at += 8) cuts.push(view.getFloat64(at, true));
  return cuts;
}
