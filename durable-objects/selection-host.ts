/**
 * The tracker object's selection-API methods (reference selection §1), kept beside the object's
 * shell so it stays a thin one: each call builds its selection context (the tracker, the schedulable
 * workers, the router settings, the draws) and calls the pure core in `core/selection/`.
 */
import type { RouterEvent } from "./core/cache-index/cache-index";
import { seededRng, systemRng } from "./core/routing/rng";
import {
  addReservationOutputBlock,
  completeReservationPrefill,
  endReservation,
} from "./core/selection/lifecycle";
import { type PendingSelectionBounds, PendingSelections } from "./core/selection/pending-selections";
import { reserve, select } from "./core/selection/reservations";
import { catalogPartition, type SchedulablePartition } from "./core/selection/schedulable";
import type { SelectionContext } from "./core/selection/select";
import {
  cacheDump,
  overlapScores,
  selectionLoads,
  selectionPotentialLoads,
} from "./core/selection/selection-views";
import type { Tracker } from "./core/tracker";
import type { RouterSettings } from "./router-settings";
import type {
  OverlapScores,
  PromptQuery,
  ReservationInput,
  ReservationOutcome,
  SelectInput,
  SelectionLoad,
  SelectOutcome,
} from "./selection-types";
import type { Result } from "./types";

export class SelectionHost {
  /** Pending selections of this tracker in this replica (memory only, as Dynamo's). */
  readonly pending: PendingSelections;
  /** The catalog's schedulable workers, as of the tracker's `rosterVersion` they were read at. */
  private schedulable: { version: number; partition: SchedulablePartition | undefined } | undefined;

  constructor(
    private readonly tracker: Tracker,
    private readonly settings: RouterSettings,
    bounds: Partial<PendingSelectionBounds> = {},
  ) {
    this.pending = new PendingSelections(bounds);
  }

  select(input: SelectInput, now: number): Result<SelectOutcome> {
    return select(this.context(now, input.seed), this.pending, input);
  }

  reserve(input: ReservationInput, now: number): Result<ReservationOutcome> {
    return reserve(this.context(now), this.pending, input);
  }

  /** Whether `id` is a live booking here: how a Worker finds the tracker of an id-only call. */
  has(id: string, now: number): boolean {
    this.tracker.expire(now);
    return this.tracker.request(id) !== undefined;
  }

  prefillComplete(id: string, now: number): Result {
    return completeReservationPrefill(this.tracker, id, now);
  }

  outputBlock(id: string, decayFraction: number | undefined, now: number): Result {
    return addReservationOutputBlock(this.tracker, id, decayFraction, now);
  }

  end(id: string, now: number): Result {
    return endReservation(this.tracker, id, now);
  }

  loads(now: number): SelectionLoad[] | null {
    return selectionLoads(this.context(now));
  }

  potentialLoads(query: PromptQuery, now: number): Result<{ loads: SelectionLoad[] }> {
    return selectionPotentialLoads(this.context(now), query);
  }

  overlapScores(query: PromptQuery, now: number): Result<OverlapScores> {
    return overlapScores(this.context(now), query);
  }

  dump(now: number): { blockSize: number; events: RouterEvent[] } | null {
    return cacheDump(this.context(now));
  }

  /** The partition's schedulable workers, read again only when its catalog or registrations changed. */
  private partition(): SchedulablePartition | undefined {
    const version = this.tracker.rosterVersion;
    if (this.schedulable?.version !== version)
      this.schedulable = { version, partition: catalogPartition(this.tracker) };
    return this.schedulable.partition;
  }

  private context(now: number, seed?: number): SelectionContext {
    this.tracker.expire(now);
    const partition = this.partition();
    return {
      tracker: this.tracker,
      // A partition without a schedulable worker is not ready, whatever the source says of it.
      partition: partition && partition.workers.length > 0 ? partition : undefined,
      config: this.settings.config,
      tracking: this.settings.tracking,
      rng: seed === undefined ? systemRng : seededRng(seed),
      now,
    };
  }
}
