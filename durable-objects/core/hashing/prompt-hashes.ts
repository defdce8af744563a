/**
 * Everything a request handler needs from a prompt's tokens (reference §3.1–3.5): the public block
 * hashes (the indexer's), their public sequence hashes (the cache index's, and approximate route
 * recording's even in keyed mode) and the tracking sequence hashes (active-load membership and the
 * hashes returned on bookings): public, keyed, or random as configured.
 */
import type { Rng } from "../routing/rng";
import { type BlockMmInfos, blockHashesWithSeed, completeBlockCount } from "./block-hashes";
import { blockHashSeed } from "./block-seed";
import { keyedSeeds } from "./keyed-seeds";
import { randomSequenceHashes } from "./random-hashes";
import { chainInPlace, sequenceHashes } from "./sequence-hashes";
import { type Tokens, tokenBytes } from "./token-bytes";
import type { TrackingHash } from "./tracking-config";

/** A request's prompt fields, as the selection API names them. */
export interface PromptInput {
  /** `token_ids`: u32s. */
  tokenIds: Tokens;
  /** `block_mm_infos`, by block index. */
  blockMmInfos?: BlockMmInfos | null;
  /** `mm_routing_info`: when its tokens are non-empty, they and its mm infos replace the two above. */
  mmRoutingInfo?: { routingTokenIds: Tokens; blockMmInfos?: BlockMmInfos | null } | null;
  /** `lora_name`; empty is absent. */
  loraName?: string | null;
  /** `cache_salt`; empty is absent. */
  cacheSalt?: string | null;
  /** `is_eagle`; absent takes the partition's. */
  isEagle?: boolean | null;
}

/** The partition the prompt is routed in. */
export interface HashPartition {
  modelName: string;
  routingGroup: string;
  /** Tokens per block (u32, > 0 in any schedulable partition). */
  blockSize: number;
  /** The partition's eagle flag (its first worker's, default false). */
  isEagle: boolean;
}

export interface TrackingOptions {
  tracking: TrackingHash;
  /** `router_config_override.assume_kv_reuse`, else `router_assume_kv_reuse` (default true). */
  assumeKvReuse: boolean;
  /** Draws the random tracking hashes when `assumeKvReuse` is false. */
  rng: Rng;
}

export interface PromptHashes {
  /** Tokens of the prompt that was hashed (`isl_tokens`). */
  tokenCount: number;
  /** Complete blocks (eagle-aware): the length of each array below. */
  blockCount: number;
  /** Public local block hashes (u64), for indexer lookups. */
  blockHashes: BigUint64Array;
  /** Public sequence hashes (u64), for the cache index and route recording. */
  sequenceHashes: BigUint64Array;
  /** Tracking sequence hashes (u64). In public mode with KV reuse, the same array as `sequenceHashes`. */
  trackingHashes: BigUint64Array;
}

/** The tokens and mm infos that are hashed: `mm_routing_info`'s when it has tokens. */
export function promptSource(prompt: PromptInput): { tokens: Tokens; blockMmInfos: BlockMmInfos | null } {
  const routing = prompt.mmRoutingInfo;
  if (routing && routing.routingTokenIds.length > 0) {
    return { tokens: routing.routingTokenIds, blockMmInfos: routing.blockMmInfos ?? null };
  }
  return { tokens: prompt.tokenIds, blockMmInfos: prompt.blockMmInfos ?? null };
}

export function hashPrompt(
  prompt: PromptInput,
  partition: HashPartition,
  options: TrackingOptions,
): PromptHashes {
  const source = promptSource(prompt);
  const tokens = tokenBytes(source.tokens);
  const isEagle = prompt.isEagle ?? partition.isEagle;
  const windowing = { blockSize: partition.blockSize, isEagle, blockMmInfos: source.blockMmInfos };
  const blockHashes = blockHashesWithSeed(
    tokens,
    windowing,
    blockHashSeed(prompt.loraName, prompt.cacheSalt),
  );
  const publicSequence = sequenceHashes(blockHashes);
  const blockCount = completeBlockCount(tokens.count, partition.blockSize, isEagle);
  let trackingHashes = publicSequence;
  const { tracking } = options;
  if (!options.assumeKvReuse) {
    trackingHashes = randomSequenceHashes(blockCount, options.rng);
  } else if (tracking.algorithm === "keyed-xxh3-v1") {
    const seeds = keyedSeeds(tracking.key, {
      keyId: tracking.keyId,
      modelName: partition.modelName,
      routingGroup: partition.routingGroup,
      blockSize: partition.blockSize,
      cacheSalt: prompt.cacheSalt,
      loraName: prompt.loraName,
      isEagle,
    });
    trackingHashes = chainInPlace(blockHashesWithSeed(tokens, windowing, seeds.blockSeed), seeds.chainSeed);
  }
  return {
    tokenCount: tokens.count,
    blockCount,
    blockHashes,
    sequenceHashes: publicSequence,
    trackingHashes,
  };
}
