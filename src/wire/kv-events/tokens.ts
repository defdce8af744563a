/**
 * A stored event's `token_ids`: u32s, or (Dynamo's EAGLE form, `KvTokenIds::Bigram`) a list of
 * `[token, next]` pairs, one per position, whose firsts and the last pair's second are the tokens.
 * EAGLE blocks are hashed over `block_size + 1` tokens (reference selection §3.1), and this is the
 * only place an event says it is EAGLE: Dynamo's event path ignores any `is_eagle` key and goes by
 * the shape of `token_ids`, and so does this.
 *
 * The tokens are written as the bytes Dynamo hashes (u32 little-endian, `token-bytes.ts`) into one
 * scratch buffer that every event reuses: they are hashed at once and not kept, and a fresh small
 * typed array per event cost a fifth of the decoder's time (V8 moves it off its heap when its buffer
 * is first taken as a `DataView`).
 */
import type { TokenBytes } from "../../../durable-objects/core/hashing/token-bytes";
import { u32 } from "./values";

export interface EventTokens {
  /** The tokens hashed: `count` of them, or `count + 1` for pairs. Valid until the next event is read. */
  bytes: TokenBytes;
  /** Positions the event covers: tokens, or pairs. Must be blocks × block_size. */
  count: number;
  isEagle: boolean;
}

let scratch = new DataView(new ArrayBuffer(16_384));

function room(tokens: number): DataView {
  if (scratch.byteLength < 4 * tokens)
    scratch = new DataView(new ArrayBuffer(Math.max(4 * tokens, 2 * scratch.byteLength)));
  return scratch;
}

/** The tokens, or a problem's text. An empty list is plain tokens. */
export function eventTokens(value: unknown): EventTokens | string {
  if (!Array.isArray(value)) return "token_ids must be an array";
  const count = value.length;
  if (count > 0 && Array.isArray(value[0])) return pairTokens(value);
  const view = room(count);
  for (let i = 0; i < count; i++) {
    const token = u32(value[i]);
    if (token === undefined) return `token_ids[${i}] is not a u32`;
    view.setUint32(4 * i, token, true);
  }
  return { bytes: { view, count }, count, isEagle: false };
}

function pairTokens(pairs: unknown[]): EventTokens | string {
  const count = pairs.length;
  const view = room(count + 1);
  for (let i = 0; i < count; i++) {
    const pair: unknown = pairs[i];
    const first = Array.isArray(pair) && pair.length === 2 ? u32(pair[0]) : undefined;
    const second = first === undefined ? undefined : u32((pair as unknown[])[1]);
    if (second === undefined) return `token_ids[${i}] is not a pair of u32s`;
    view.setUint32(4 * i, first!, true);
    if (i === count - 1) view.setUint32(4 * count, second, true);
  }
  return { bytes: { view, count: count + 1 }, count, isEagle: true };
}
