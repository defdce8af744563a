/**
 * Local block hashes from tokens (`compute_block_hash_for_seq_with_seed`, reference §3.1): one XXH3-64
 * per complete block of `block_size` tokens, the partial trailing block dropped. Eagle windows are
 * one token longer than the stride (`block_size + 1`), so consecutive blocks share a token. A block
 * with multimodal objects hashes its token bytes followed by its objects' `mm_hash`es as u64
 * little-endian, sorted ascending; their offsets are not hashed.
 */
import type { TokenBytes } from "./token-bytes";
import { blockHashesInto, xxh3Hash } from "./xxh3";

/** One multimodal object in a block (`mm_objects[*]`). Only its hash is hashed. */
export interface MmObject {
  /** `mm_hash`, a u64. */
  mmHash: bigint;
}

/** `block_mm_infos[i]`: the multimodal objects of block i. */
export interface BlockMmInfo {
  mmObjects: readonly MmObject[];
}

/** Per block index; a null or missing entry (or no list) is a plain token block. */
export type BlockMmInfos = readonly (BlockMmInfo | null | undefined)[];

export interface BlockWindowing {
  /** Tokens per block, the stride between blocks (u32; 0 gives no blocks). */
  blockSize: number;
  /** Eagle windows: `blockSize + 1` tokens each, still `blockSize` apart. */
  isEagle: boolean;
  blockMmInfos?: BlockMmInfos | null;
}

/** `complete_block_count`: `len / bs`, or `(len − 1) / bs` (saturating) for eagle; 0 when bs is 0. */
export function completeBlockCount(tokenCount: number, blockSize: number, isEagle: boolean): number {
  if (!(blockSize > 0)) return 0;
  return Math.floor((isEagle ? Math.max(0, tokenCount - 1) : tokenCount) / blockSize);
}

/** The block hashes of `tokens` under one XXH3 seed (public: {@link blockHashSeed}; keyed: the derived block seed). */
export function blockHashesWithSeed(
  tokens: TokenBytes,
  windowing: BlockWindowing,
  seed: bigint,
): BigUint64Array {
  const { blockSize, isEagle, blockMmInfos } = windowing;
  const count = completeBlockCount(tokens.count, blockSize, isEagle);
  const hashes = new BigUint64Array(count);
  const stride = 4 * blockSize;
  const window = stride + (isEagle ? 4 : 0);
  const { view } = tokens;
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  if (!blockMmInfos?.some((info) => (info?.mmObjects.length ?? 0) > 0)) {
    blockHashesInto(bytes, stride, window, seed, hashes);
    return hashes;
  }
  for (let i = 0; i < count; i++) {
    const objects = blockMmInfos[i]?.mmObjects;
    const block = bytes.subarray(i * stride, i * stride + window);
    hashes[i] = xxh3Hash(objects && objects.length > 0 ? withMmHashes(block, objects) : block, seed);
  }
  return hashes;
}

/** A block's token bytes and then its objects' hashes, sorted ascending (unsigned), 8 bytes LE each. */
function withMmHashes(block: Uint8Array, objects: readonly MmObject[]): Uint8Array {
  const sorted = BigUint64Array.from(objects, (object) => object.mmHash).sort();
  const bytes = new Uint8Array(block.byteLength + 8 * sorted.length);
  bytes.set(block);
  const view = new DataView(bytes.buffer);
  for (let j = 0; j < sorted.length; j++) view.setBigUint64(block.byteLength + 8 * j, sorted[j]!, true);
  return bytes;
}
