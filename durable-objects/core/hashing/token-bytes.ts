/**
 * A prompt's tokens as the bytes Dynamo hashes: each token a u32, 4 bytes little-endian, in order,
 * with no separator or length prefix (reference §3.1).
 */
import { LITTLE_ENDIAN } from "./u64-halves";

export interface TokenBytes {
  /** The token bytes, `4 × count` of them. */
  view: DataView;
  /** The number of tokens. */
  count: number;
}

/** Tokens as a `Uint32Array` (used as it is) or an array of numbers, each a u32. */
export type Tokens = Uint32Array | readonly number[];

/**
 * The bytes of `tokens`. A `Uint32Array` is viewed where it lies on a little-endian host (every
 * Workers host), not copied. Numbers must be u32s: the request schema checks them, so another value is
 * a caller's bug and throws, rather than wrapping into a different prompt.
 */
export function tokenBytes(tokens: Tokens): TokenBytes {
  const words = tokens instanceof Uint32Array ? tokens : wordsOf(tokens);
  const count = words.length;
  if (LITTLE_ENDIAN) return { view: new DataView(words.buffer, words.byteOffset, 4 * count), count };
  const view = new DataView(new ArrayBuffer(4 * count));
  for (let i = 0; i < count; i++) view.setUint32(4 * i, words[i]!, true);
  return { view, count };
}

function wordsOf(tokens: readonly number[]): Uint32Array {
  const words = new Uint32Array(tokens.length);
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token >>> 0 !== token) throw new RangeError(`token ${i} is not a u32: ${token}`);
    words[i] = token;
  }
  return words;
}
