/**
 * An event's fields by name, from either wire form (engine-kv-events §1, Dynamo's
 * `RawKvEventVisitor`):
 *
 * - a tagged array (vLLM before #42892, SGLang, older TRT-LLM), fields by position. `BlockStored` is
 *   `[tag, block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium, lora_name,
 *   extra_keys, …tail]`, `BlockRemoved` `[tag, block_hashes, medium, …tail]`; older versions stop
 *   earlier or fill nils, which read as absent. Position 7 holds SGLang's `{cache_salt}` map instead of a
 *   LoRA name in its salted stores (#30827).
 * - a map with a `type` key (vLLM ≥ 0.26, SGLang #37482, TRT-LLM), fields by key; unknown keys ignored.
 *
 * The tail holds the fields appended since (#37688, #40984, then locality and ownership). From four
 * elements on it is read by position, `[group_idx, kv_cache_spec_kind, kv_cache_spec_sliding_window,
 * locality, ownership]`, when every element has its slot's type; a shorter or irregular tail is read by
 * type, as Dynamo reads the tails of the v1.2 era: the first u32 is the group, a string the kind, and an
 * array Dynamo's own `block_mm_infos`. Either way a tail element of another type is passed over, as
 * Dynamo passes it over, while a wrong type in a named field or positions 1–8 is a malformed event.
 */
import { isMap, isNil, u32 } from "./values";

export interface EventFields {
  tag: string;
  /** Absent, nil and unset are all `undefined` or `null`. */
  blockHashes?: unknown;
  parent?: unknown;
  tokenIds?: unknown;
  blockSize?: unknown;
  loraId?: unknown;
  medium?: unknown;
  loraName?: unknown;
  cacheSalt?: unknown;
  extraKeys?: unknown;
  blockMmInfos?: unknown;
  group?: unknown;
  specKind?: unknown;
  locality?: unknown;
  ownership?: unknown;
}

/** The fields of an event array or map, or a problem's text when it has no kind to go by. */
export function eventFields(event: unknown): EventFields | string {
  if (Array.isArray(event)) return arrayFields(event);
  if (isMap(event)) return mapFields(event);
  return "an event must be an array or a map";
}

function arrayFields(event: unknown[]): EventFields | string {
  const tag: unknown = event[0];
  if (typeof tag !== "string") return "an event array must start with its kind, a string";
  if (tag === "BlockStored") {
    const fields: EventFields = {
      tag,
      blockHashes: event[1],
      parent: event[2],
      tokenIds: event[3],
      blockSize: event[4],
      loraId: event[5],
      medium: event[6],
      extraKeys: event[8],
    };
    const seventh: unknown = event[7];
    if (isMap(seventh)) fields.cacheSalt = seventh.cache_salt;
    else fields.loraName = seventh;
    readTail(event, 9, fields, true);
    return fields;
  }
  if (tag === "BlockRemoved") {
    const fields: EventFields = { tag, blockHashes: event[1], medium: event[2] };
    readTail(event, 3, fields, false);
    return fields;
  }
  // `AllBlocksCleared` gained an ownership; anything else has no field read here.
  return { tag, ownership: typeof event[1] === "string" ? event[1] : undefined };
}

const TAIL = 5;

function readTail(event: unknown[], from: number, fields: EventFields, stored: boolean): void {
  const length = Math.min(event.length - from, TAIL);
  if (length <= 0) return;
  if (length >= 4 && fixedTail(event, from, length)) {
    fields.group = event[from];
    fields.specKind = event[from + 1];
    fields.locality = event[from + 3];
    fields.ownership = event[from + 4];
    return;
  }
  for (let i = from; i < from + length; i++) {
    const value: unknown = event[i];
    if (fields.group === undefined && u32(value) !== undefined) fields.group = value;
    else if (typeof value === "string") fields.specKind = value;
    else if (stored && Array.isArray(value)) fields.blockMmInfos = value;
  }
}

/** Slots: u32, string, u32, string, string; nil fits any. */
function fixedTail(event: unknown[], from: number, length: number): boolean {
  for (let i = 0; i < length; i++) {
    const value: unknown = event[from + i];
    if (isNil(value)) continue;
    const unsigned = i === 0 || i === 2;
    if (unsigned ? u32(value) === undefined : typeof value !== "string") return false;
  }
  return true;
}

function mapFields(event: Record<string, unknown>): EventFields | string {
  const tag = event.type;
  if (typeof tag !== "string") return "an event map must have a string type";
  return {
    tag,
    blockHashes: event.block_hashes,
    parent: event.parent_block_hash,
    tokenIds: event.token_ids,
    blockSize: event.block_size,
    loraId: event.lora_id,
    medium: event.medium,
    loraName: event.lora_name,
    cacheSalt: event.cache_salt,
    extraKeys: event.extra_keys,
    blockMmInfos: event.block_mm_infos,
    group: event.group_idx,
    specKind: event.kv_cache_spec_kind,
    locality: event.locality,
    ownership: event.ownership,
  };
}
