/**
 * Selections that book, or prepare a booking (reference selection §1.5, §1.6, §4.8). A reservation
 * is a live request of the tracker whose id is the `selection_id`, booked through `Tracker.add`, so
 * it is persisted, replicated, expired and listed as an `/add` is, and `/free` ends it as `DELETE
 * /reservations/{id}` does; its prompt is recorded in the cache index on its rank.
 *
 * - `/select` chooses without booking; with a `selection_id` it leaves the choice pending.
 * - `/select_and_reserve` chooses and books in one synchronous step of the object: no other call can
 *   read the loads in between, so two of them cannot both take the last idle rank.
 * - `/reservations` replays a pending selection (single use; a failure keeps it for a retry) or
 *   books an explicit (worker, rank), discarding any pending selection of the id.
 */
import type {
  ExplicitReservation,
  ReservationInput,
  ReservationOutcome,
  SelectInput,
  SelectOutcome,
} from "../../selection-types";
import type { AddInput, CachePrompt, Result } from "../../types";
import { fail } from "../messages";
import { explicitReservationTracksPrefill } from "../routing/router-config-override";
import type { PendingSelection, PendingSelections } from "./pending-selections";
import { workerAt } from "./schedulable";
import { type Choice, choose, keyOf, outcomeOf, prepare, type SelectionContext } from "./select";
import { notReady, selectionText } from "./selection-messages";
import { cachePromptOf } from "./selection-prompt";

/** `/select` and `/select_and_reserve`. */
export function select(
  ctx: SelectionContext,
  pending: PendingSelections,
  input: SelectInput,
): Result<SelectOutcome> {
  const id = input.selectionId;
  if (input.mode === "book" && id !== undefined) {
    const clash = conflict(ctx, id);
    if (clash) return clash;
  }
  if (input.mode === "book") {
    const refused = ownerRefusal(ctx, input.owner);
    if (refused) return refused;
  }
  const prepared = prepare(ctx, input.prompt, input.override);
  if (!prepared.ok) return prepared;
  const choice = choose(ctx, prepared, input);
  if (!choice.ok) return choice;
  const { prompt, settings, figures, chosen } = choice;
  const track = settings.trackPrefillTokens;
  const cachePrompt = cachePromptOf(prompt);
  const outcome = outcomeOf(choice, id);
  if (input.mode !== "book") {
    if (id !== undefined) {
      pending.put(
        id,
        {
          workerId: chosen.workerId,
          dpRank: chosen.dpRank,
          tracking: prompt.tracking,
          isl: prompt.isl,
          effectivePrefillTokens: figures.effectivePrefillTokens,
          trackPrefillTokens: track,
          ...(input.expectedOutputTokens !== undefined && {
            expectedOutputTokens: input.expectedOutputTokens,
          }),
          cachePrompt,
        },
        ctx.now,
      );
    }
    if (input.mode === "advisory") outcome.workerLoad = workerLoadOf(choice);
    return { ok: true, ...outcome };
  }
  const booked = book(ctx, id!, choice, {
    tracking: prompt.tracking,
    prefillTokens: track ? figures.effectivePrefillTokens : 0,
    expectedOutputTokens: input.expectedOutputTokens,
    cachePrompt,
    owner: input.owner,
  });
  if (!booked.ok) return booked;
  outcome.booking = { sequenceHashes: prompt.tracking, islTokens: prompt.isl, trackPrefillTokens: track };
  return { ok: true, ...outcome };
}

/** `POST /reservations`. */
export function reserve(
  ctx: SelectionContext,
  pending: PendingSelections,
  input: ReservationInput,
): Result<ReservationOutcome> {
  const id = input.selectionId;
  // Before anything else: a refused owner leaves even the pending selection of the id in place.
  const refused = ownerRefusal(ctx, input.owner);
  if (refused) return refused;
  if (input.explicit) {
    pending.remove(id);
    return reserveExplicit(ctx, id, input.explicit, input.owner);
  }
  const entry = pending.peek(id, ctx.now);
  if (!entry) return fail("request_not_found", selectionText.pendingMiss(id, keyOf(ctx)));
  // Every failure from here keeps the entry, for a retry.
  if (!ctx.partition) return notReady(keyOf(ctx));
  const clash = conflict(ctx, id);
  if (clash) return clash;
  const booked = bookPending(ctx, id, entry, input.owner);
  if (booked.ok) pending.remove(id);
  return booked;
}

function bookPending(
  ctx: SelectionContext,
  id: string,
  entry: PendingSelection,
  owner: string | undefined,
): Result<ReservationOutcome> {
  const worker = workerAt(ctx.partition, entry);
  if (!worker || !ctx.tracker.book.slotOf(entry.workerId, entry.dpRank)) {
    return fail("rank_not_found", selectionText.cachedWorkerGone(entry.workerId, entry.dpRank, keyOf(ctx)));
  }
  const added = ctx.tracker.add(
    addInput(id, entry, {
      tracking: entry.tracking,
      prefillTokens: entry.trackPrefillTokens ? entry.effectivePrefillTokens : 0,
      expectedOutputTokens: entry.expectedOutputTokens,
      cachePrompt: entry.cachePrompt,
      owner,
    }),
    ctx.now,
  );
  if (!added.ok) return added;
  return {
    ok: true,
    selectionId: id,
    workerId: entry.workerId,
    dpRank: entry.dpRank,
    endpoint: worker.endpoint,
  };
}

function reserveExplicit(
  ctx: SelectionContext,
  id: string,
  explicit: ExplicitReservation,
  owner: string | undefined,
): Result<ReservationOutcome> {
  const prepared = prepare(ctx, explicit.prompt, explicit.override);
  if (!prepared.ok) return prepared;
  const { prompt } = prepared;
  const effective = explicit.effectivePrefillTokens;
  if (effective !== undefined && effective > prompt.isl) {
    return fail("invalid_input", selectionText.effectivePrefillAboveIsl(effective, prompt.isl));
  }
  const at = { workerId: explicit.workerId, dpRank: explicit.dpRank };
  const worker = workerAt(ctx.partition, at);
  if (!worker || !ctx.tracker.book.slotOf(at.workerId, at.dpRank)) {
    return fail("worker_not_found", selectionText.explicitWorkerGone(at.workerId, keyOf(ctx)));
  }
  const clash = conflict(ctx, id);
  if (clash) return clash;
  const track = explicitReservationTracksPrefill(
    explicit.trackPrefillTokens,
    effective !== undefined,
    ctx.config,
    explicit.override,
  );
  // Without the field the hint is none, and Dynamo books 0 prefill tokens (`unwrap_or(0)`).
  const added = ctx.tracker.add(
    addInput(id, at, {
      tracking: prompt.tracking,
      prefillTokens: track ? (effective ?? 0) : 0,
      expectedOutputTokens: explicit.expectedOutputTokens,
      cachePrompt: cachePromptOf(prompt),
      owner,
    }),
    ctx.now,
  );
  if (!added.ok) return added;
  return { ok: true, selectionId: id, workerId: at.workerId, dpRank: at.dpRank, endpoint: worker.endpoint };
}

interface BookingParts {
  tracking: BigUint64Array;
  prefillTokens: number;
  expectedOutputTokens: number | undefined;
  cachePrompt: CachePrompt | null;
  /** The lease owner of the booking, if any. */
  owner: string | undefined;
}

function book(ctx: SelectionContext, id: string, choice: Choice, parts: BookingParts): Result {
  return ctx.tracker.add(addInput(id, choice.chosen, parts), ctx.now);
}

function addInput(id: string, at: { workerId: bigint; dpRank: number }, parts: BookingParts): AddInput {
  const input: AddInput = {
    requestId: id,
    workerId: at.workerId,
    dpRank: at.dpRank,
    hashes: parts.tracking,
    newIslTokens: parts.prefillTokens,
    cachePrompt: parts.cachePrompt,
  };
  if (parts.expectedOutputTokens !== undefined) input.expectedOutputTokens = parts.expectedOutputTokens;
  if (parts.owner !== undefined) input.owner = parts.owner;
  return input;
}

/** Why an owned booking must be refused before the call changes anything (`Tracker.ownerRefusal`). */
function ownerRefusal(ctx: SelectionContext, owner: string | undefined) {
  return owner === undefined ? undefined : ctx.tracker.ownerRefusal(owner, ctx.now);
}

/** 409 when `id` is booked already (a reservation ids one booking, whatever its worker). */
function conflict(ctx: SelectionContext, id: string) {
  return ctx.tracker.request(id) ? fail("duplicate_request", selectionText.alreadyReserved(id)) : undefined;
}

function workerLoadOf(choice: Choice): NonNullable<SelectOutcome["workerLoad"]> {
  const { chosen } = choice;
  const { totalKvBlocks, maxNumBatchedTokens } = chosen.worker;
  return {
    activePrefillTokens: chosen.load.activePrefillTokens,
    prefillTokenCapacity: maxNumBatchedTokens ?? 0n,
    ...(totalKvBlocks !== undefined && { totalKvBlocks }),
  };
}
