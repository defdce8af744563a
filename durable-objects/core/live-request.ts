import type { CachePrompt } from "../types";
import type { PrefillEntry } from "./prefill-queue";
import type { RankSlot } from "./rank-slot";
import type { AddEvent } from "./replica/events";

/**
 * One live request. A class (one hidden shape for all of them) holding only scalars and links: the
 * prompt itself lives in the tracker's trie and is reached through `leaf`.
 */
export class LiveRequest implements PrefillEntry {
  prefillPrev: PrefillEntry | null = null;
  prefillNext: PrefillEntry | null = null;
  inPrefill = false;
  /** Key of the newest prefill completion of this booking (NaN: none), for replica merging. */
  prefillTs = Number.NaN;
  prefillOrigin = "";
  /** Neighbours in the tracker's deadline-ordered expiry list. */
  expiryPrev: LiveRequest | null = null;
  expiryNext: LiveRequest | null = null;
  /**
   * What the cache index records of it (`AddInput.cachePrompt`), kept so that a snapshot or a
   * re-placement books it again as it came: 8 bytes a block for a selection booking (16 when its
   * tracking hashes are not the public ones), nothing for a slot-tracker one.
   */
  cachePrompt: CachePrompt | null | undefined = undefined;
  /** Output blocks added to it (selection `output_block`), in millionths of a block; this replica only. */
  outputMicroBlocks = 0;
  /**
   * The lease an owned request was booked under (`lease-table.ts`): its owner, and the grant's time
   * and deadline (a cut after `at` ends it); null for the unowned, which expire by age. One object:
   * the grant's two number fields would hold a heap number each in every request (about 40 bytes
   * more per live request, measured in Node).
   */
  lease: { readonly owner: string; readonly at: number; readonly deadline: number } | null = null;

  constructor(
    readonly id: string,
    readonly slot: RankSlot,
    /** Trie node of the prompt's last block. */
    readonly leaf: number,
    /** When the request was booked, epoch ms. */
    readonly startedAt: number,
    /** `startedAt` + the expiry age: the request is expired once the clock passes it. */
    readonly deadline: number,
    readonly prefillTokens: number,
    readonly prefillDurationMs: number,
    readonly expectedOutputTokens: number | undefined,
    /** Hybrid clock time of the add that booked it (with `origin`, its replication key). */
    readonly addTs: number,
    /** The replica that accepted the add. */
    readonly origin: string,
    /** Prompt length in blocks: its share of the tracker's live block budget. */
    readonly blocks: number,
  ) {}

  /** The owner whose lease keeps it (null: unowned). */
  get owner(): string | null {
    return this.lease?.owner ?? null;
  }

  /** When its lease grant was made (NaN: unowned). */
  get grantAt(): number {
    return this.lease?.at ?? Number.NaN;
  }

  /** Its lease grant's deadline (NaN: unowned). */
  get grantDeadline(): number {
    return this.lease?.deadline ?? Number.NaN;
  }
}

/** A live request as the add that booked it, with `hashes` for its prompt. */
export function bookingOf(req: LiveRequest, hashes: BigUint64Array): AddEvent {
  const event: AddEvent = {
    type: "add",
    ts: req.addTs,
    origin: req.origin,
    requestId: req.id,
    workerId: req.slot.workerId,
    dpRank: req.slot.dpRank,
    hashes,
    newIslTokens: req.prefillTokens,
    expectedOutputTokens: req.expectedOutputTokens,
    expectedPrefillDurationMs: Number.isNaN(req.prefillDurationMs) ? undefined : req.prefillDurationMs,
    startedAt: req.startedAt,
    deadline: req.deadline,
  };
  if (req.cachePrompt !== undefined) event.cachePrompt = req.cachePrompt;
  if (req.lease !== null) {
    event.owner = req.lease.owner;
    event.grant = { at: req.lease.at, deadline: req.lease.deadline };
  }
  return event;
}
