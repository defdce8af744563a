/**
 * A selection request's prompt as the tracker uses it (reference selection §3.5): the tracking
 * hashes it books and projects loads with, its tokens, and the public local and sequence hashes the
 * cache index is queried and recorded with. Tokens are hashed here, where the partition's block size
 * and eagle flag are known; trusted hashes are taken as they are, and their public chain is
 * recomputed from the local hashes for the index, as Dynamo's approximate recording does
 * (`RoutingDecisionHashes::from_local_hashes`), whatever chain the tracking hashes use.
 */
import type { SelectionPrompt } from "../../selection-types";
import type { CachePrompt } from "../../types";
import type { PromptBlocks } from "../cache-index/cache-index";
import { type HashPartition, hashPrompt, type TrackingOptions } from "../hashing/prompt-hashes";
import { sequenceHashes } from "../hashing/sequence-hashes";

export interface NormalizedPrompt {
  /** Tokens of the prompt (`isl_tokens`). */
  isl: number;
  /** Tracking sequence hashes (u64): booked, and matched against live prompts. */
  tracking: BigUint64Array;
  /** Public local and sequence hashes, or null for a reservation given sequence hashes alone. */
  index: PromptBlocks | null;
}

export function normalizePrompt(
  prompt: SelectionPrompt,
  partition: HashPartition,
  options: TrackingOptions,
): NormalizedPrompt {
  if (prompt.kind === "hashes") {
    const { blockHashes } = prompt;
    const index = blockHashes
      ? { localHashes: blockHashes, sequenceHashes: sequenceHashes(blockHashes) }
      : null;
    return { isl: prompt.islTokens, tracking: prompt.sequenceHashes, index };
  }
  const hashed = hashPrompt(prompt.tokens, partition, options);
  return {
    isl: hashed.tokenCount,
    tracking: hashed.trackingHashes,
    index: { localHashes: hashed.blockHashes, sequenceHashes: hashed.sequenceHashes },
  };
}

/** What a booking of `prompt` records in the cache index (`AddInput.cachePrompt`). */
export function cachePromptOf(prompt: NormalizedPrompt): CachePrompt | null {
  const { index, tracking } = prompt;
  if (!index) return null;
  // The index's sequence hashes travel only when the booked ones are not them.
  return sameHashes(index.sequenceHashes, tracking)
    ? { blockHashes: index.localHashes }
    : { blockHashes: index.localHashes, sequenceHashes: index.sequenceHashes };
}

function sameHashes(a: BigUint64Array, b: BigUint64Array): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
