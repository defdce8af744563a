/**
 * The routing-quality trace: seeded and deterministic, a pure function of its constants. Requests
 * come from 300 conversations (system prompts with their history) of Zipf-like popularity
 * (weight ∝ 1 / rank^1.0); a request is its conversation's prefix (32–128 blocks) and a suffix of
 * its own (4–32 blocks), 16 tokens a block, hashed from token ids with Dynamo's public hashes
 * (`core/hashing/`), as the selection service hashes a prompt. A booking completes its prefill 4
 * requests after it is made and ends 32–192 requests after (uniform), and requests arrive 50 ms apart,
 * so the cache index's 120 s TTL spans 2,400 requests.
 */

import { hashPrompt } from "../../durable-objects/core/hashing/prompt-hashes";
import { PUBLIC_TRACKING } from "../../durable-objects/core/hashing/tracking-config";
import { seededRng } from "../../durable-objects/core/routing/rng";
import { Rng } from "../core/trace";

export const BLOCK_SIZE = 16;
export const CONVERSATIONS = 300;
export const ZIPF_EXPONENT = 1.0;
export const REQUESTS = 20_000;
export const STEP_MS = 50;
export const PREFILL_AFTER = 4;
export const HOLD = { min: 32, max: 192 };
export const PREFIX_BLOCKS = { min: 32, max: 128 };
export const SUFFIX_BLOCKS = { min: 4, max: 32 };
const VOCABULARY = 128_000;
const SEED = 0x7a11_c0de;

export interface TraceRequest {
  id: string;
  conversation: number;
  /** Public local block hashes and sequence hashes (u64), one per complete block. */
  blockHashes: BigUint64Array;
  sequenceHashes: BigUint64Array;
  /** Tokens of the prompt (`isl_tokens`). */
  isl: number;
  /** Request index whose arrival completes this booking's prefill, and the one whose arrival ends it. */
  prefillAt: number;
  endAt: number;
}

const between = (rng: Rng, range: { min: number; max: number }) =>
  range.min + rng.below(range.max - range.min + 1);

/** Cumulative Zipf weights over the conversations, for inverse-transform draws. */
function zipfCdf(): Float64Array {
  const cdf = new Float64Array(CONVERSATIONS);
  let sum = 0;
  for (let k = 0; k < CONVERSATIONS; k++) {
    sum += 1 / (k + 1) ** ZIPF_EXPONENT;
    cdf[k] = sum;
  }
  for (let k = 0; k < CONVERSATIONS; k++) cdf[k]! /= sum;
  return cdf;
}

function draw(cdf: Float64Array, u: number): number {
  let lo = 0;
  let hi = cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cdf[mid]! < u) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function tokensOf(rng: Rng, blocks: number): Uint32Array {
  const tokens = new Uint32Array(blocks * BLOCK_SIZE);
  for (let i = 0; i < tokens.length; i++) tokens[i] = rng.below(VOCABULARY);
  return tokens;
}

/** The whole trace, built once; every policy replays these same requests. */
export function buildTrace(): TraceRequest[] {
  const rng = new Rng(SEED);
  const prefixes = Array.from({ length: CONVERSATIONS }, () => tokensOf(rng, between(rng, PREFIX_BLOCKS)));
  const cdf = zipfCdf();
  const partition = { modelName: "bench", routingGroup: "default", blockSize: BLOCK_SIZE, isEagle: false };
  const options = { tracking: PUBLIC_TRACKING, assumeKvReuse: true, rng: seededRng(SEED) };
  return Array.from({ length: REQUESTS }, (_, r) => {
    const conversation = draw(cdf, rng.u32() / 2 ** 32);
    const prefix = prefixes[conversation]!;
    const suffix = tokensOf(rng, between(rng, SUFFIX_BLOCKS));
    const tokenIds = new Uint32Array(prefix.length + suffix.length);
    tokenIds.set(prefix);
    tokenIds.set(suffix, prefix.length);
    const hashed = hashPrompt({ tokenIds }, partition, options);
    return {
      id: `r${r}`,
      conversation,
      blockHashes: hashed.blockHashes,
      sequenceHashes: hashed.sequenceHashes,
      isl: hashed.tokenCount,
      prefillAt: r + PREFILL_AFTER,
      endAt: r + between(rng, HOLD),
    };
  });
}
