/**
 * The partition's fix (block size and eagle flag) as a function of what the tracker holds, so that
 * every replica derives the same one from the same changes whatever order they came in. Candidates
 * are the registrations (`/register`, eagle off) and the catalog records that reach reconciliation
 * (nothing of reasons 1–5 missing); the oldest by candidacy key fixes it, as in Dynamo the first
 * worker to reach `ensure_entry` does. A worker keeps its candidacy across its upserts while its
 * block size and eagle flag stay (`isCandidate` in `catalog-state.ts`), so a PATCH does not hand
 * the partition to another worker. When the founder leaves, the next oldest candidate decides (the slot tracker's rule for a
 * tracker's block size), which may turn records of the old size `incomplete`.
 */
import type { EventKey } from "../replica/clock";
import { isNewer } from "../replica/clock";
import type { TrackerState } from "../tracker-state";
import { CATALOG_CONFIG, type CatalogFields, type CatalogRecord, type PartitionFix } from "./catalog-record";
import { notSchedulableReasons, reconcile } from "./schedulable";
import { REGISTERED_IS_EAGLE } from "./slot-tracker-meeting";

export interface Candidate extends PartitionFix {
  /** Founder order among candidates that agreed alike: the oldest fixes the partition. */
  readonly key: EventKey;
  /**
   * Whether it agreed with the partition where it was written: it matched every agreeing candidate
   * there, or there was none. Agreeing candidates come first, so a record refused there ("reconciliation
   * failed") fixes the partition only once no agreeing worker is left, and one worker changing its
   * block size does not hand the partition to an older refused record (Dynamo's fix stays put).
   */
  readonly agreed: boolean;
}

/** A tracker's registration of `workerId`, set aside or in the book, if the slot-tracker API made one. */
export function registrationKeyOf(tracker: TrackerState, workerId: bigint): EventKey | undefined {
  if (tracker.catalog.entries.has(workerId)) return undefined;
  return tracker.book.workers.get(workerId)?.key ?? tracker.records.excluded.get(workerId);
}

function precedes(a: Candidate, b: Candidate | undefined): boolean {
  if (b === undefined) return true;
  if (a.agreed !== b.agreed) return a.agreed;
  return isNewer(b.key, a.key);
}

/**
 * The fix, with the candidacy of `workerId` replaced by `replacing.candidate` (none: the worker is
 * no candidate) when given: what a write of that worker would leave. With `agreedOnly`, only the
 * agreeing candidates count (what a write is checked against to know whether it agrees).
 */
export function partitionFix(
  tracker: TrackerState,
  replacing?: { workerId: bigint; candidate: Candidate | undefined },
  agreedOnly = false,
): PartitionFix | undefined {
  let founder: Candidate | undefined;
  const consider = (workerId: bigint, candidate: Candidate) => {
    if (workerId === replacing?.workerId || (agreedOnly && !candidate.agreed)) return;
    if (precedes(candidate, founder)) founder = candidate;
  };
  const { book, catalog, records } = tracker;
  // The slot tracker admits a registration only into agreement (or founding), as a write agrees.
  for (const w of book.workers.values()) {
    if (catalog.entries.has(w.workerId)) continue;
    consider(w.workerId, {
      key: w.key,
      blockSize: w.input.blockSize,
      isEagle: REGISTERED_IS_EAGLE,
      agreed: true,
    });
  }
  for (const e of records.excluded.values()) {
    consider(e.workerId, { key: e, blockSize: e.blockSize, isEagle: REGISTERED_IS_EAGLE, agreed: true });
  }
  for (const entry of catalog.entries.values()) {
    const { upsert } = entry;
    if (entry.candidate)
      consider(upsert.workerId, candidateOf(upsert.fields, upsert.candidacy, upsert.agreed));
  }
  const replacement = replacing?.candidate;
  if (replacement !== undefined && !(agreedOnly && !replacement.agreed) && precedes(replacement, founder)) {
    founder = replacement;
  }
  return founder && { blockSize: founder.blockSize, isEagle: founder.isEagle };
}

/** A record as a candidate (it has a block size ≥ 1: see `isCandidate`). */
export function candidateOf(fields: CatalogFields, key: EventKey, agreed: boolean): Candidate {
  return { key, blockSize: fields.blockSize ?? 0, isEagle: fields.isEagle ?? false, agreed };
}

/** Whether a write of `fields` agrees with the partition as the other agreeing workers fix it. */
export function agrees(tracker: TrackerState, fields: CatalogFields): boolean {
  const fix = partitionFix(tracker, { workerId: fields.workerId, candidate: undefined }, true);
  return fix === undefined || reconcile(fix, fields).ok;
}

/**
 * The candidacy a write of `fields` keeps: the worker's current one when it already was a
 * candidate with the same block size and eagle flag (a registration counts, eagle off), else none
 * (the write's own key starts a new one).
 */
export function keptCandidacy(tracker: TrackerState, fields: CatalogFields): EventKey | undefined {
  const blockSize = fields.blockSize ?? 0;
  const isEagle = fields.isEagle ?? false;
  const entry = tracker.catalog.entries.get(fields.workerId);
  if (entry !== undefined) {
    const { fields: before, candidacy } = entry.upsert;
    const same = before.blockSize === blockSize && (before.isEagle ?? false) === isEagle;
    return entry.candidate && same ? candidacy : undefined;
  }
  const registered =
    tracker.book.workers.get(fields.workerId)?.input.blockSize ??
    tracker.records.excluded.get(fields.workerId)?.blockSize;
  if (registered !== blockSize || isEagle !== REGISTERED_IS_EAGLE) return undefined;
  return registrationKeyOf(tracker, fields.workerId);
}

/** Dynamo's judgement of a record (reference selection §7): reasons 1–5, then reconciliation. */
export function judgeRecord(fields: CatalogFields, fix: PartitionFix | undefined): CatalogRecord {
  const reasons = notSchedulableReasons(fields, CATALOG_CONFIG);
  if (reasons.length === 0) {
    const reconciled = reconcile(fix, fields);
    if (!reconciled.ok) reasons.push(reconciled.reason);
  }
  return {
    ...fields,
    lifecycle: reasons.length === 0 ? "schedulable" : "incomplete",
    notSchedulableReasons: reasons,
  };
}
