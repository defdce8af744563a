/**
 * Choosing a rank for a selection request (reference selection §4): the prompt normalized in the
 * partition, the candidates' costs, Dynamo's choice among them, and the figures a `SelectResponse`
 * reports. Nothing here books; `reservations.ts` does, in the same synchronous step.
 */
import type { SelectionConstraints, SelectionPrompt, SelectOutcome } from "../../selection-types";
import type { Result } from "../../types";
import type { TrackingHashConfig } from "../hashing/tracking-config";
import { fail } from "../messages";
import { type RankFigures, selectRank } from "../routing/dynamo-choice";
import { NO_HITS } from "../routing/dynamo-cost";
import { overlapSummary } from "../routing/dynamo-overlap";
import type { Rng } from "../routing/rng";
import type { KvRouterConfig } from "../routing/router-config";
import { type SelectionSettings, selectionSettings } from "../routing/router-config-override";
import type { Tracker } from "../tracker";
import { type Candidate, eligible, partitionRanks } from "./candidates";
import type { SchedulablePartition } from "./schedulable";
import { notReady, partitionKey, selectionText } from "./selection-messages";
import { type NormalizedPrompt, normalizePrompt } from "./selection-prompt";

/** What one selection call runs against: the tracker, its schedulable workers, the config, the draws. */
export interface SelectionContext {
  tracker: Tracker;
  /** Undefined while the partition has no schedulable worker. */
  partition: SchedulablePartition | undefined;
  config: Readonly<KvRouterConfig>;
  tracking: TrackingHashConfig;
  rng: Rng;
  now: number;
}

/** A prompt in its partition, with the settings the request runs with. */
export interface Prepared {
  partition: SchedulablePartition;
  prompt: NormalizedPrompt;
  settings: SelectionSettings;
  /** Every rank of the partition's schedulable workers, with its figures. */
  ranks: Candidate[];
}

export interface Choice extends Prepared {
  chosen: Candidate;
  figures: RankFigures;
}

export function keyOf(ctx: SelectionContext): string {
  return partitionKey(ctx.tracker.model, ctx.tracker.tenant);
}

/** Normalizes `prompt` in the partition: 503 while nothing is schedulable there. */
export function prepare(
  ctx: SelectionContext,
  prompt: SelectionPrompt,
  override: SelectionConstraints["override"],
): Result<Prepared> {
  const { partition, tracker } = ctx;
  if (!partition) return notReady(keyOf(ctx));
  const settings = selectionSettings(ctx.config, override);
  if (prompt.kind === "tokens" && !ctx.tracking.ok) {
    return fail("no_worker", selectionText.trackingMisconfigured(ctx.tracking.problem));
  }
  const tracking = ctx.tracking.ok ? ctx.tracking.tracking : { algorithm: "public-xxh3-v1" as const };
  const normalized = normalizePrompt(
    prompt,
    {
      modelName: tracker.model,
      routingGroup: tracker.tenant,
      blockSize: partition.blockSize,
      isEagle: partition.isEagle,
    },
    { tracking, assumeKvReuse: settings.assumeKvReuse, rng: ctx.rng },
  );
  const ranks = partitionRanks(tracker, partition, normalized, ctx.now);
  return { ok: true, partition, prompt: normalized, settings, ranks };
}

/** The rank Dynamo's selector chooses for a prepared prompt under the request's constraints. */
export function choose(
  ctx: SelectionContext,
  prepared: Prepared,
  constraints: SelectionConstraints,
): Result<Choice> {
  const { partition, prompt, settings, ranks } = prepared;
  let candidates = eligible(ranks, constraints);
  const pinned = constraints.pinned;
  if (pinned) {
    const allowed = constraints.allowedWorkerIds;
    if (allowed && !allowed.includes(pinned.workerId)) {
      return fail("invalid_input", selectionText.pinnedNotAllowed(pinned.workerId, pinned.dpRank));
    }
    candidates = candidates.filter((c) => c.workerId === pinned.workerId && c.dpRank === pinned.dpRank);
  }
  const selected = selectRank(
    candidates,
    {
      isl: prompt.isl,
      blockSize: partition.blockSize,
      trackedBlocks: prompt.tracking.length,
      settings,
      ...(constraints.preferredTaints && { preferredTaints: constraints.preferredTaints }),
      pinned: pinned !== undefined,
    },
    ctx.rng,
  );
  if (!selected) return notReady(keyOf(ctx));
  return { ok: true, ...prepared, chosen: selected.candidate as Candidate, figures: selected.figures };
}

/** The `SelectResponse` of a choice (its booking facts and worker load are the caller's to add). */
export function outcomeOf(choice: Choice, selectionId: string | undefined): SelectOutcome {
  const { chosen, partition, ranks, figures } = choice;
  const worker = chosen.worker;
  // By the worker's record, not its id: a 64-bit comparison per rank of the partition cost more.
  const workerRanks = ranks.filter((c) => c.worker === worker);
  const summary = overlapSummary(
    workerRanks.length > 0 ? workerRanks : [{ dpRank: chosen.dpRank, hits: NO_HITS }],
    partition.blockSize,
  );
  return {
    ...(selectionId !== undefined && { selectionId }),
    workerId: chosen.workerId,
    dpRank: chosen.dpRank,
    endpoint: worker.endpoint,
    blockSize: partition.blockSize,
    overlap: summary,
    effectivePrefillTokens: figures.effectivePrefillTokens,
    potentialDecodeBlocks: figures.potentialDecodeBlocksAfterAdmission,
  };
}
