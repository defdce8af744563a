/**
 * The two trackers under comparison behind one small interface, each fed the trace in the form its
 * API takes: our core gets `BigUint64Array` prompts (as RPC delivers them), the baseline `bigint[]`.
 * Both adapters cost the same (one call each), so the comparison is of the trackers themselves.
 */
import { Tracker } from "../../durable-objects/core/tracker";
import { DP_SIZE, WORKER_IDS } from "./trace";

/** The baseline's API (`../shared/bench/naive-tracker.mjs`), used as given. */
export interface NaiveTrackerApi {
  register(worker: bigint, dpStart: number, dpSize: number): void;
  add(id: string, worker: bigint, rank: number, hashes: bigint[], isl: number): void;
  markPrefillCompleted(id: string): void;
  free(id: string): void;
  potentialLoads(query: bigint[], isl: number): unknown[];
}

export type NaiveTrackerClass = new () => NaiveTrackerApi;

/** One request as a subject takes it; `hashes` is in the subject's own form. */
export interface Booking<H> {
  id: string;
  worker: number;
  dpRank: number;
  newIslTokens: number;
  hashes: H;
}

export interface Subject<H> {
  readonly name: string;
  add(b: Booking<H>, now: number): void;
  prefillComplete(id: string, now: number): void;
  free(id: string, now: number): void;
  potentialLoads(query: H, now: number): number;
}

const QUERY_ISL = 1024;

export class OurSubject implements Subject<BigUint64Array> {
  readonly name = "ours";
  /** Caps raised past the largest book: the benchmark measures the core, not the admission rules. */
  readonly tracker = new Tracker({
    model: "bench",
    tenant: "default",
    expiryMs: 3_600_000,
    limits: { maxLiveRequests: 1_000_000, maxLiveBlocks: 1_000_000_000 },
  });

  constructor(now: number) {
    for (const workerId of WORKER_IDS) {
      this.tracker.register({ workerId, blockSize: 16, dpStart: 0, dpSize: DP_SIZE }, now);
    }
  }

  add(b: Booking<BigUint64Array>, now: number): void {
    const result = this.tracker.add(
      {
        requestId: b.id,
        workerId: WORKER_IDS[b.worker]!,
        dpRank: b.dpRank,
        hashes: b.hashes,
        newIslTokens: b.newIslTokens,
      },
      now,
    );
    if (!result.ok) throw new Error(result.message);
  }

  prefillComplete(id: string, now: number): void {
    const result = this.tracker.prefillComplete(id, now);
    if (!result.ok) throw new Error(result.message);
  }

  free(id: string, now: number): void {
    this.tracker.free(id, now);
  }

  potentialLoads(query: BigUint64Array, now: number): number {
    const result = this.tracker.potentialLoads(query, QUERY_ISL, now);
    if (!result.ok) throw new Error(result.message);
    return result.loads.length;
  }
}

export class NaiveSubject implements Subject<bigint[]> {
  readonly name = "baseline";
  readonly tracker: NaiveTrackerApi;

  constructor(Naive: NaiveTrackerClass) {
    this.tracker = new Naive();
    for (const workerId of WORKER_IDS) this.tracker.register(workerId, 0, DP_SIZE);
  }

  add(b: Booking<bigint[]>): void {
    this.tracker.add(b.id, WORKER_IDS[b.worker]!, b.dpRank, b.hashes, b.newIslTokens);
  }

  prefillComplete(id: string): void {
    this.tracker.markPrefillCompleted(id);
  }

  free(id: string): void {
    this.tracker.free(id);
  }

  potentialLoads(query: bigint[]): number {
    return this.tracker.potentialLoads(query, QUERY_ISL).length;
  }
}
