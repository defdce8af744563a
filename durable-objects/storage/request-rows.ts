/**
 * A live request as a row of `requests`, and the statements that write one: shared by the direct
 * writes (`sql-tracker-store.ts`) and the journal's fold and replay (`request-journal.ts`).
 */

import type { LiveRequest } from "../core/live-request";
import type { AddInput, CachePrompt } from "../types";
import { bytesOf } from "./row-groups";
import { blobToHashes, workerIdBlob } from "./u64";

const COLUMNS = [
  "request_id",
  "seq",
  "worker_id",
  "dp_rank",
  "hashes",
  "new_isl_tokens",
  "started_at",
  "prefill_done",
  "anchor_at",
  "expected_output_tokens",
  "prefill_duration_ms",
  "add_ts",
  "origin",
  "deadline",
  "prefill_ts",
  "prefill_origin",
  "cache_block_hashes",
  "cache_sequence_hashes",
  "owner",
  "grant_at",
  "grant_deadline",
] as const;

/** The first of the owned-booking columns, which trail the row so an unowned put can leave them off. */
export const OWNER_COLUMNS_FROM = COLUMNS.indexOf("owner");

/**
 * The BLOB columns of prompt hashes, in the order a journal row's BLOB holds them (`journal-entries.ts`).
 * The cache columns keep `AddInput.cachePrompt`: both NULL when it is absent, an empty
 * `cache_block_hashes` when it is null (record nothing).
 */
export const HASH_COLUMNS = ["hashes", "cache_block_hashes", "cache_sequence_hashes"] as const;

/** Each column's position in {@link RequestValues}. */
export const REQUEST_COLUMN = Object.fromEntries(COLUMNS.map((name, i) => [name, i])) as {
  readonly [K in (typeof COLUMNS)[number]]: number;
};

/** A row's values in column order (`worker_id` and `hashes` as BLOBs). */
export type RequestValues = SqlStorageValue[];

/** Writes a whole row, replacing the one of the same id if there is one. */
export const UPSERT_REQUEST = `INSERT OR REPLACE INTO requests (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map(() => "?").join(", ")})`;
export const COMPLETE_PREFILL =
  "UPDATE requests SET prefill_done = 1, prefill_ts = ?, prefill_origin = ? WHERE request_id = ?";
export const MOVE_ANCHOR = "UPDATE requests SET anchor_at = ? WHERE request_id = ?";
export const DELETE_REQUEST = "DELETE FROM requests WHERE request_id = ?";

/** The row of a request just booked, `seq` its place in the add order. */
export function requestValues(req: LiveRequest, input: AddInput, seq: number): RequestValues {
  const cache = input.cachePrompt;
  return [
    req.id,
    seq,
    workerIdBlob(req.slot.workerId),
    req.slot.dpRank,
    bytesOf(input.hashes),
    req.prefillTokens,
    req.startedAt,
    // A replicated booking can arrive with its prefill already completed elsewhere.
    req.inPrefill || req.prefillTokens === 0 ? 0 : 1,
    null,
    req.expectedOutputTokens ?? null,
    Number.isNaN(req.prefillDurationMs) ? null : req.prefillDurationMs,
    req.addTs,
    req.origin,
    req.deadline,
    Number.isNaN(req.prefillTs) ? null : req.prefillTs,
    Number.isNaN(req.prefillTs) ? null : req.prefillOrigin,
    cache === undefined ? null : cache === null ? NO_HASHES : bytesOf(cache.blockHashes),
    cache?.sequenceHashes === undefined ? null : bytesOf(cache.sequenceHashes),
    req.owner,
    req.owner === null ? null : req.grantAt,
    req.owner === null ? null : req.grantDeadline,
  ];
}

const NO_HASHES = new ArrayBuffer(0);

/** `AddInput.cachePrompt` from a row's cache columns. */
export function cachePromptOf(
  block: ArrayBuffer | null,
  sequence: ArrayBuffer | null,
): CachePrompt | null | undefined {
  if (block === null) return undefined;
  if (block.byteLength === 0) return null;
  const prompt: CachePrompt = { blockHashes: blobToHashes(block) };
  if (sequence !== null) prompt.sequenceHashes = blobToHashes(sequence);
  return prompt;
}
