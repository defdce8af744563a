/**
 * `keyed-xxh3-v1`'s seeds (`TrackingHashContext::derive_seeds`, reference §3.3): BLAKE3 keyed with the
 * provider's 32-byte key over a domain string and tagged frames of the tracking scope; the digest's
 * first 8 bytes (LE) seed the block hashes, the next 8 the chain. Whoever lacks the key cannot
 * predict a prompt's tracking hashes, while every router holding it computes the same ones.
 *
 * BLAKE3 comes from `@noble/hashes` (audited, pure JavaScript, no WASM, so it runs in workerd); it
 * runs once per prompt over ~100 bytes, so its speed does not matter.
 */
import { blake3 } from "@noble/hashes/blake3.js";

const DOMAIN = "dynamo.router.tracking-hash/keyed-xxh3-v1\0";
const UTF8 = new TextEncoder();

/** What the keyed seeds depend on besides the key. */
export interface KeyedScope {
  /** The provider key's epoch, `router_tracking_key_id`. */
  keyId: string;
  modelName: string;
  routingGroup: string;
  /** Tokens per block (u32). */
  blockSize: number;
  /** Absent and empty are the same. */
  cacheSalt?: string | null;
  /** Absent and empty are the same. */
  loraName?: string | null;
  isEagle: boolean;
}

export interface KeyedSeeds {
  /** The XXH3 seed of the keyed block hashes (u64); lora and salt are in it already, via the frames. */
  blockSeed: bigint;
  /** The XXH3 seed of the keyed chain (u64). */
  chainSeed: bigint;
}

/** Frames in order: 1 key id, 2 model, 3 routing group, 4 block size, 5 salt, 6 lora, 7 eagle. */
export function keyedSeeds(key: Uint8Array, scope: KeyedScope): KeyedSeeds {
  const parts: Uint8Array[] = [UTF8.encode(DOMAIN)];
  fixed(parts, 1, UTF8.encode(scope.keyId));
  fixed(parts, 2, UTF8.encode(scope.modelName));
  fixed(parts, 3, UTF8.encode(scope.routingGroup));
  const blockSize = new Uint8Array(4);
  new DataView(blockSize.buffer).setUint32(0, scope.blockSize, true);
  fixed(parts, 4, blockSize);
  optional(parts, 5, scope.cacheSalt);
  optional(parts, 6, scope.loraName);
  fixed(parts, 7, Uint8Array.of(scope.isEagle ? 1 : 0));
  const digest = blake3(concat(parts), { key });
  const view = new DataView(digest.buffer, digest.byteOffset, digest.byteLength);
  return { blockSeed: view.getBigUint64(0, true), chainSeed: view.getBigUint64(8, true) };
}

/** `[tag] ‖ u64le(len) ‖ value`. */
function fixed(parts: Uint8Array[], tag: number, value: Uint8Array): void {
  parts.push(Uint8Array.of(tag), u64le(value.length), value);
}

/** `[tag, 0]` when absent or empty, else `[tag, 1] ‖ u64le(len) ‖ utf8`. */
function optional(parts: Uint8Array[], tag: number, value: string | null | undefined): void {
  if (!value) {
    parts.push(Uint8Array.of(tag, 0));
    return;
  }
  const bytes = UTF8.encode(value);
  parts.push(Uint8Array.of(tag, 1), u64le(bytes.length), bytes);
}

function u64le(n: number): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(n), true);
  return bytes;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
