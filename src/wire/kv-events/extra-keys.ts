/**
 * What vLLM's `extra_keys` (one entry per block: nil or a list of keys) tell the block hash, read as
 * Dynamo's event path reads them (`zmq_wire/extra_keys.rs`). The reference says to treat the list as
 * opaque, so nothing in it is ever refused: keys of shapes Dynamo does not read (numbers, bytes, the
 * unmerged typed maps of vLLM #55488) are passed over.
 *
 * - Multimodal objects: a key that is a string, or a `[string, offset]` pair (vLLM 0.19+), holding a
 *   Dynamo-marked hash: 16 hex digits then 48 zeros, as Dynamo's worker submits a frontend's
 *   `mm_hash` to vLLM (`mark_mm_hash_for_extra_key`); the hash is the 16 digits. Dynamo has read
 *   this three ways over time (any 64-digit hex; that or an XXH3 of any paired identifier; only the
 *   marked form): the marked form is the one all three read alike, and the newest reads no other, so
 *   vLLM's own image digests leave a block plain, as the frontend that did not mark them hashes it.
 * - Cache salt, when the event has no `cache_salt`: in the first block's keys, the first plain string
 *   `dynamo-cache-salt:<salt>`, after passing over the first key equal to the LoRA name (vLLM puts
 *   the adapter's name among the keys too, and a salt may equal it).
 */
import type { BlockMmInfo, BlockMmInfos } from "../../../durable-objects/core/hashing/block-hashes";
import { isMap } from "./values";

const SALT_PREFIX = "dynamo-cache-salt:";
const MARKED_HASH = /^[0-9a-fA-F]{16}0{48}$/;

/** The multimodal objects of each block, or null when no block has one. */
export function mmInfosFromExtraKeys(extraKeys: unknown): BlockMmInfos | null {
  if (!Array.isArray(extraKeys)) return null;
  let infos: (BlockMmInfo | null)[] | null = null;
  for (let i = 0; i < extraKeys.length; i++) {
    const keys: unknown = extraKeys[i];
    if (!Array.isArray(keys)) continue;
    let objects: { mmHash: bigint }[] | null = null;
    for (const key of keys) {
      const identifier = Array.isArray(key) && key.length === 2 && isOffset(key[1]) ? key[0] : key;
      if (typeof identifier !== "string" || !MARKED_HASH.test(identifier)) continue;
      objects ??= [];
      objects.push({ mmHash: BigInt(`0x${identifier.slice(0, 16)}`) });
    }
    if (objects === null) continue;
    infos ??= new Array<BlockMmInfo | null>(extraKeys.length).fill(null);
    infos[i] = { mmObjects: objects };
  }
  return infos;
}

function isOffset(value: unknown): boolean {
  return typeof value === "bigint" || (typeof value === "number" && Number.isSafeInteger(value));
}

/** The Dynamo-tagged cache salt in the first block's keys, or null. */
export function saltFromExtraKeys(extraKeys: unknown, loraName: string | null): string | null {
  if (!Array.isArray(extraKeys)) return null;
  const first: unknown = extraKeys[0];
  if (!Array.isArray(first)) return null;
  let unmatchedLora = loraName;
  for (const key of first) {
    if (typeof key !== "string") continue;
    if (unmatchedLora !== null && key === unmatchedLora) {
      unmatchedLora = null;
      continue;
    }
    if (key.startsWith(SALT_PREFIX) && key.length > SALT_PREFIX.length) return key.slice(SALT_PREFIX.length);
  }
  return null;
}

/**
 * Dynamo's own `block_mm_infos` (its publishers send it; vLLM does not): per block, nil or
 * `{mm_objects: [{mm_hash, offsets}]}`. Unlike extra keys it is a structured field that is hashed, so
 * a malformed one is refused: the problem's text, or the infos.
 */
export function explicitMmInfos(value: unknown): BlockMmInfos | string {
  if (!Array.isArray(value)) return "block_mm_infos must be an array";
  const infos: (BlockMmInfo | null)[] = new Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const entry: unknown = value[i];
    if (entry === null || entry === undefined) {
      infos[i] = null;
      continue;
    }
    const objects = isMap(entry) ? entry.mm_objects : undefined;
    if (!Array.isArray(objects)) return `block_mm_infos[${i}] must be nil or a map with mm_objects`;
    const mmObjects: { mmHash: bigint }[] = [];
    for (let j = 0; j < objects.length; j++) {
      const object: unknown = objects[j];
      const mmHash = isMap(object) ? u64(object.mm_hash) : undefined;
      if (mmHash === undefined) return `block_mm_infos[${i}].mm_objects[${j}].mm_hash must be a u64`;
      mmObjects.push({ mmHash });
    }
    infos[i] = { mmObjects };
  }
  return infos;
}

function u64(value: unknown): bigint | undefined {
  if (typeof value === "bigint") return value >= 0n ? value : undefined;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  return undefined;
}
