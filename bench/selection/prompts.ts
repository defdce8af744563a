/**
 * The selection benchmark's prompts: 2,048 `token_ids` (128 blocks of 16), the first 64 blocks their
 * family's (1,000 families), the other 64 their own. Prompt `i` is a pure function of `i` (seeded),
 * so the core and HTTP parts send the same prompts without holding them.
 */
import { Rng } from "../core/trace";
import { BLOCK_SIZE } from "./partition";

export const PROMPT_BLOCKS = 128;
export const SHARED_BLOCKS = 64;
export const FAMILIES = 1_000;
const VOCABULARY = 128_000;

const FAMILY_TOKENS: Uint32Array = (() => {
  const tokens = new Uint32Array(FAMILIES * SHARED_BLOCKS * BLOCK_SIZE);
  const rng = new Rng(0xfa317);
  for (let i = 0; i < tokens.length; i++) tokens[i] = rng.below(VOCABULARY);
  return tokens;
})();

/** Prompt `i`'s token ids, in a fresh array (as the Worker hands a request's tokens to the object). */
export function promptTokens(i: number): Uint32Array {
  const rng = new Rng(Math.imul(i, 0x9e3779b1) ^ 0x5e1ec7);
  const family = rng.below(FAMILIES);
  const shared = SHARED_BLOCKS * BLOCK_SIZE;
  const tokenIds = new Uint32Array(PROMPT_BLOCKS * BLOCK_SIZE);
  tokenIds.set(FAMILY_TOKENS.subarray(family * shared, (family + 1) * shared));
  for (let k = shared; k < tokenIds.length; k++) tokenIds[k] = rng.below(VOCABULARY);
  return tokenIds;
}
