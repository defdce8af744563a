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
  /** The owner whose lease keeps it (null: unowned, it expires by age). */
  owner: string | null = null;
  /** The lease grant it was made under (`lease-table.ts`): a cut after `grantAt` ends it. */
  grantAt = Number.NaN;
  grantDeadline = Number.NaN;

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
  if (req.owner !== null) {
    event.owner = req.owner;
    event.grant = { at: req.grantAt, deadline: req.grantDeadline };
  }
  return event;
}
