/**
 * The XXH3 seed of a prompt's public block hashes (`dynamo_kv_hashing::compute_salt_hash`, reference
 * §3.1): 1337, plus the LoRA adapter's and the cache salt's own hashes, so the same tokens under
 * another adapter or namespace are other blocks.
 */
import { xxh3String } from "./xxh3";

/** `XXH3_SEED` / `CHAIN_XXH3_SEED`: the block seed without lora or salt, and the public chain's seed. */
export const XXH3_SEED = 1337n;

/**
 * 1337 + xxh3_64(utf8(lora_name), seed 0) + xxh3_64(utf8(cache_salt), seed 1), wrapping at 2^64. An
 * absent or empty name adds nothing; the order of the two does not matter (addition commutes).
 */
export function blockHashSeed(loraName?: string | null, cacheSalt?: string | null): bigint {
  let seed = XXH3_SEED;
  if (loraName) seed += xxh3String(loraName, 0n);
  if (cacheSalt) seed += xxh3String(cacheSalt, 1n);
  return BigInt.asUintN(64, seed);
}
