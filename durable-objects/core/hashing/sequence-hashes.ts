/**
 * Sequence hashes: each block's hash chained to its prefix's (`compute_seq_hash_for_block`, reference
 * §3.2): `seq[0] = block[0]`, `seq[i] = xxh3_64(LE64(seq[i − 1]) ‖ LE64(block[i]), seed)`. The public
 * chain (`public-xxh3-v1`) always uses seed 1337, whatever the lora or salt, which enter only through
 * the block seed; the keyed chain uses its derived chain seed.
 */
import { XXH3_SEED } from "./block-seed";
import { chainHashesInPlace } from "./xxh3";

/** The sequence hashes of `blockHashes` under `chainSeed` (1337 for the public chain). A new array. */
export function sequenceHashes(blockHashes: BigUint64Array, chainSeed: bigint = XXH3_SEED): BigUint64Array {
  return chainInPlace(blockHashes.slice(), chainSeed);
}

/**
 * Turns block hashes into sequence hashes where they lie: entry i still holds its block hash when
 * entry i − 1 already holds its sequence hash, which is all that step i reads. Returns `hashes`.
 */
export function chainInPlace(hashes: BigUint64Array, chainSeed: bigint): BigUint64Array {
  chainHashesInPlace(hashes, chainSeed);
  return hashes;
}

/** One step of the chain (`compute_next_sequence_hash`): a block's sequence hash from its parent's. */
export function nextSequenceHash(parent: bigint, blockHash: bigint, chainSeed: bigint = XXH3_SEED): bigint {
  const pair = new BigUint64Array([parent, blockHash]);
  return chainInPlace(pair, chainSeed)[1]!;
}
