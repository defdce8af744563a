/**
 * `core/lease/`: frontend leases (SPEC §8). A lease says "bookings of this owner are still wanted";
 * while it is live, its bookings do not expire by age, and when it lapses or is deleted they are
 * freed at that moment.
 *
 * The state of one owner's lease is a function of two sets of changes, whatever order they came in:
 * - **grants** (a create or renewal, or the grant an owned booking carries): the grant's time `at`
 *   (the physical ms of its key) and its `deadline`;
 * - **cuts**: the moments the lease ended, `at` — a `DELETE /leases/{owner}`, or a lapse, which
 *   whichever replica sees its deadline pass with no later grant records and ships as a cut.
 *
 * A cut at `c` clips every grant with `at < c`: such a grant no longer keeps the lease past `c`.
 * (So a delete is cut after the millisecond of the newest grant, even one made in its own
 * millisecond: `lease-calls.ts`.)
 * The lease is live at `now` iff some unclipped grant has `deadline > now`; its deadline is the
 * largest such. An owned booking carries the grant it was made under, and **is live iff no cut `c`
 * with `grant.at < c` exists** (and its other rules hold): a function of the booking and the cuts.
 *
 * That is the rule that forbids resurrection. A renewal that reaches a replica after the deadline
 * it extends has already passed there finds the lapse's cut recorded: the renewal is clipped, the
 * bookings stay freed, and the cut, shipped to the replica the renewal came from, frees them there
 * too, so every replica agrees on both the bookings and the lease. Since cuts only accumulate and
 * a grant's effect depends only on the cuts after it, applying the same grants and cuts in any
 * order gives the same state. A frontend renewing every ttl/3 never meets this: it needs a
 * renewal to take longer than 2·ttl/3 to reach a replica.
 *
 * Unclipped grants are kept as a staircase: later `at`, earlier `deadline` (a grant that another
 * grant has both a later time and a later deadline than can never matter: every cut that clips the
 * other clips it too). Renewals of one ttl keep one step.
 */
import { MAX_LEASE_STEPS } from "../../limits";

/** One grant: made at `at`, keeps the lease live until `deadline` (both epoch ms). */
export interface LeaseGrant {
  at: number;
  deadline: number;
}

/** One owner's lease, as `GET /leases` and persistence see it. */
export interface LeaseState {
  owner: string;
  /** Unclipped grants, `at` ascending and `deadline` descending (the first holds the deadline). */
  steps: LeaseGrant[];
  /** Cuts still remembered, ascending (epoch ms). */
  cuts: number[];
}

export class Lease implements LeaseState {
  steps: LeaseGrant[] = [];
  cuts: number[] = [];

  constructor(readonly owner: string) {}

  /** The lease's deadline, or undefined when no grant is left (the lease is not live at all). */
  get deadline(): number | undefined {
    return this.steps[0]?.deadline;
  }

  /** Whether the lease is live at `now`. */
  liveAt(now: number): boolean {
    const deadline = this.deadline;
    return deadline !== undefined && now < deadline;
  }

  /** The grant a booking made now is made under: the newest one (a cut must come after it to end it). */
  newestGrant(): LeaseGrant | undefined {
    return this.steps[this.steps.length - 1];
  }

  /** Whether a cut after `at` is recorded: a grant (or a booking made under it) of that time is ended. */
  cutAfter(at: number): boolean {
    const last = this.cuts[this.cuts.length - 1];
    return last !== undefined && at < last;
  }

  /**
   * Adds a grant. @returns whether the state changed (a clipped or dominated grant changes nothing).
   */
  grant(grant: LeaseGrant): boolean {
    if (this.cutAfter(grant.at)) return false;
    if (this.steps.some((s) => s.at >= grant.at && s.deadline >= grant.deadline)) return false;
    const steps = this.steps.filter((s) => !(s.at <= grant.at && s.deadline <= grant.deadline));
    let i = steps.length;
    while (i > 0 && steps[i - 1]!.at > grant.at) i--;
    steps.splice(i, 0, grant);
    // Only renewals that shorten the lease add steps. Past the cap the middle ones go: the first
    // holds the deadline and the last is what new bookings are made under.
    if (steps.length > MAX_LEASE_STEPS) steps.splice(1, steps.length - MAX_LEASE_STEPS);
    this.steps = steps;
    return true;
  }

  /**
   * Records a cut at `at`: grants before it are clipped. @returns whether anything changed. Grants
   * are clipped even when the cut was known, and a grant with nothing left after the cut goes too, so
   * a lapse at the deadline always leaves a later deadline or none (the expiry loop relies on it).
   */
  cut(at: number): boolean {
    const cuts = this.cuts;
    let i = cuts.length;
    while (i > 0 && cuts[i - 1]! > at) i--;
    const known = i > 0 && cuts[i - 1] === at;
    if (!known) cuts.splice(i, 0, at);
    const steps = this.steps.filter((step) => step.at >= at && step.deadline > at);
    const clipped = steps.length !== this.steps.length;
    this.steps = steps;
    return !known || clipped;
  }

  /** Forgets cuts before `beforeMs`: no grant or booking that old can still arrive alive. */
  purgeCuts(beforeMs: number): boolean {
    let n = 0;
    while (n < this.cuts.length && this.cuts[n]! < beforeMs) n++;
    if (n === 0) return false;
    this.cuts.splice(0, n);
    return true;
  }

  /** Whether nothing is left to remember: no grant, no cut. */
  get empty(): boolean {
    return this.steps.length === 0 && this.cuts.length === 0;
  }
}
