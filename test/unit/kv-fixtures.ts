import type { KvEventBatch, KvEventsInput, KvOp, KvStoredOp } from "../../durable-objects/kv-event-types";
import { blockHashesWithSeed } from "../../durable-objects/core/hashing/block-hashes";
import { XXH3_SEED } from "../../durable-objects/core/hashing/block-seed";
import { sequenceHashes } from "../../durable-objects/core/hashing/sequence-hashes";
import { tokenBytes } from "../../durable-objects/core/hashing/token-bytes";
import type { PromptBlocks } from "../../durable-objects/core/cache-index/cache-index";

export const BLOCK = 4;

/** The tokens of block `b` of a prompt: `BLOCK` tokens that name it (distinct blocks, distinct tokens). */
export function blockTokens(b: number): number[] {
  return Array.from({ length: BLOCK }, (_, i) => b * 100 + i);
}

/** Public local block hashes of blocks named `blocks` (see {@link blockTokens}). */
export function localHashesOf(blocks: number[]): BigUint64Array {
  const tokens = Uint32Array.from(blocks.flatMap(blockTokens));
  return blockHashesWithSeed(
    tokenBytes(tokens),
    { blockSize: BLOCK, isEagle: false, blockMmInfos: null },
    XXH3_SEED,
  );
}

/** The query of a prompt made of blocks `blocks`, as the selection API hashes it. */
export function promptOf(blocks: number[]): PromptBlocks {
  const localHashes = localHashesOf(blocks);
  return { localHashes, sequenceHashes: sequenceHashes(localHashes) };
}

/** A `BlockStored` of blocks `blocks` under engine hashes `engine` (engine hash = block name + 1000 by default). */
export function stored(
  blocks: number[],
  parent: number | null = null,
  engine = blocks.map((b) => b + 1000),
): KvStoredOp {
  return {
    kind: "stored",
    tier: "device",
    blockSize: BLOCK,
    engineHashes: BigUint64Array.from(engine.map(BigInt)),
    parent: parent === null ? null : BigInt(parent + 1000),
    localHashes: localHashesOf(blocks),
  };
}

export function removed(blocks: number[]): KvOp {
  return {
    kind: "removed",
    tier: "device",
    engineHashes: BigUint64Array.from(blocks.map((b) => BigInt(b + 1000))),
  };
}

export function batch(...ops: KvOp[]): KvEventBatch {
  return { at: 0, dpRank: null, ops };
}

export function call(
  seq: number,
  batches: KvEventBatch[],
  epoch = "e1",
  workerId = 1n,
  dpRank = 0,
): KvEventsInput {
  return { workerId, dpRank, seq, epoch, batches };
}
