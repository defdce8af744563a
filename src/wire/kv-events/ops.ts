/**
 * One event's fields as the op the tracker applies, or null for an event left out. Each event is read
 * in three steps, so that what a call is refused for does not depend on which filter comes first:
 * every field's shape (400), then Dynamo's filters (skipped events), then a kept store's own
 * consistency (422) before its blocks are hashed.
 *
 * Skipped, as newest Dynamo's `ZmqEventNormalizer` and `convert_event` skip them: unknown kinds (and
 * the literal `Ignored`); an explicit `ownership` (Dynamo's indexer takes only the framework's, which
 * sends none); a `locality` other than LOCAL; an unknown `medium` (`tier.ts`); on the device and host
 * tiers, groups other than main attention (`groups.ts`); a store that repeats a hash or its parent
 * (Dynamo: "self-referencing block"). And where Dynamo would index the wrong thing, or nothing:
 * - a store naming a LoRA only by `lora_id` (vLLM before #27577): Dynamo drops the id and files the
 *   adapter's blocks as the base model's, which would match base-model prompts; skipped instead;
 * - a store without tokens (vLLM's offloading placeholders: `token_ids` [] or nil, `block_size` 0, one
 *   per hash it offloads): it cannot be hashed, and Dynamo indexes no block from it either;
 * - an event without hashes: nothing to apply.
 */
import type { StorageTier } from "../../../durable-objects/core/cache-index/cache-index";
import { type BlockMmInfos, blockHashesWithSeed } from "../../../durable-objects/core/hashing/block-hashes";
import { blockHashSeed } from "../../../durable-objects/core/hashing/block-seed";
import type { KvClearedOp, KvOp, KvRemovedOp, KvStoredOp } from "../../../durable-objects/kv-event-types";
import { explicitMmInfos, mmInfosFromExtraKeys, saltFromExtraKeys } from "./extra-keys";
import type { EventFields } from "./fields";
import type { GroupKinds } from "./groups";
import { inconsistent, malformed, type Place } from "./problem";
import { tierOf } from "./tier";
import { type EventTokens, eventTokens } from "./tokens";
import { hash64, isNil, text, u32 } from "./values";

export interface EventContext {
  place: Place;
  /** The batch's rank, else the call's: what group kinds are learned under. */
  rank: number | null;
  groups: GroupKinds;
  /** Called with a kept event's block count before its blocks are hashed; throws past the cap. */
  spend(blocks: number): void;
}

export function eventOp(fields: EventFields, context: EventContext): KvOp | null {
  if (fields.tag === "BlockStored") return storedOp(fields, context);
  if (fields.tag === "BlockRemoved") return removedOp(fields, context);
  if (fields.tag === "AllBlocksCleared") return clearedOp(fields, context);
  return null;
}

/** The fields every event kind shares, checked. */
interface Placement {
  /** undefined: a medium Dynamo does not know. */
  tier: StorageTier | undefined;
  group: number | null;
  kind: string | null;
  /** Whether ownership or locality leave the event out. */
  foreign: boolean;
}

function placement(fields: EventFields, place: Place): Placement {
  const medium = textField(fields.medium, "medium", place);
  const group = isNil(fields.group) ? null : u32(fields.group);
  if (group === undefined) throw malformed(place, "group_idx must be a u32 or nil");
  const kind = textField(fields.specKind, "kv_cache_spec_kind", place);
  // Unlike the names above, an empty locality or ownership is one Dynamo does not know, not none.
  const locality = rawText(fields.locality, "locality", place);
  const ownership = rawText(fields.ownership, "ownership", place);
  const foreign = ownership !== null || (locality !== null && locality !== "LOCAL");
  return { tier: tierOf(medium), group, kind, foreign };
}

function storedOp(fields: EventFields, context: EventContext): KvStoredOp | null {
  const { place } = context;
  const engineHashes = hashList(fields.blockHashes, place);
  const parent = isNil(fields.parent) ? null : hash64(fields.parent);
  if (parent === undefined)
    throw malformed(place, "parent_block_hash must be a 64-bit integer, bytes or nil");
  let tokens: EventTokens | null = null;
  if (!isNil(fields.tokenIds)) {
    const read = eventTokens(fields.tokenIds);
    if (typeof read === "string") throw malformed(place, read);
    tokens = read;
  }
  const hasTokens = tokens !== null && tokens.count > 0;
  const blockSize = isNil(fields.blockSize) && !hasTokens ? 0 : u32(fields.blockSize);
  if (blockSize === undefined) throw malformed(place, "block_size must be a u32");
  const loraName = textField(fields.loraName, "lora_name", place);
  const cacheSalt = textField(fields.cacheSalt, "cache_salt", place);
  let mmInfos: BlockMmInfos | null = null;
  if (!isNil(fields.blockMmInfos)) {
    const read = explicitMmInfos(fields.blockMmInfos);
    if (typeof read === "string") throw malformed(place, read);
    mmInfos = read;
  }
  const { tier, group, kind, foreign } = placement(fields, place);

  if (foreign || tier === undefined) return null;
  if (tier === "device" || tier === "host_pinned") {
    context.groups.learn(context.rank, group, kind);
    if (!context.groups.isMain(context.rank, group, kind)) return null;
  }
  if (!isNil(fields.loraId) && loraName === null) return null;
  if (!hasTokens) return null;
  if (repeats(engineHashes, parent)) return null;

  if (blockSize === 0) throw inconsistent(place, "block_size is 0");
  const count = tokens?.count ?? 0;
  if (count !== engineHashes.length * blockSize) {
    const what = tokens?.isEagle ? "token pairs" : "tokens";
    throw inconsistent(
      place,
      `token_ids has ${count} ${what}; ${engineHashes.length} blocks of ${blockSize} need ${engineHashes.length * blockSize}`,
    );
  }

  context.spend(engineHashes.length);
  const windowing = {
    blockSize,
    isEagle: tokens!.isEagle,
    blockMmInfos: mmInfos ?? mmInfosFromExtraKeys(fields.extraKeys),
  };
  // The seed of reference selection §3.1: the event's LoRA name and cache salt, as a prompt's are.
  const seed = blockHashSeed(loraName, cacheSalt ?? saltFromExtraKeys(fields.extraKeys, loraName));
  const localHashes = blockHashesWithSeed(tokens!.bytes, windowing, seed);
  return { kind: "stored", tier, blockSize, engineHashes, parent, localHashes };
}

function removedOp(fields: EventFields, context: EventContext): KvRemovedOp | null {
  const { place } = context;
  const engineHashes = hashList(fields.blockHashes, place);
  const { tier, group, kind, foreign } = placement(fields, place);
  if (foreign || tier === undefined || engineHashes.length === 0) return null;
  if ((tier === "device" || tier === "host_pinned") && !context.groups.isMain(context.rank, group, kind)) {
    return null;
  }
  context.spend(engineHashes.length);
  return { kind: "removed", tier, engineHashes };
}

function clearedOp(fields: EventFields, context: EventContext): KvClearedOp | null {
  return rawText(fields.ownership, "ownership", context.place) === null ? { kind: "cleared" } : null;
}

function textField(value: unknown, name: string, place: Place): string | null {
  const read = text(value);
  if (read === undefined) throw malformed(place, `${name} must be a string or nil`);
  return read;
}

function rawText(value: unknown, name: string, place: Place): string | null {
  if (isNil(value)) return null;
  if (typeof value !== "string") throw malformed(place, `${name} must be a string or nil`);
  return value;
}

function hashList(value: unknown, place: Place): BigUint64Array {
  if (!Array.isArray(value)) throw malformed(place, "block_hashes must be an array");
  const hashes = new BigUint64Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const hash = hash64(value[i]);
    if (hash === undefined) throw malformed(place, `block_hashes[${i}] is not a 64-bit integer or bytes`);
    hashes[i] = hash;
  }
  return hashes;
}

const SMALL_RUN = 32;

/** Whether a hash comes twice among the parent and the blocks (a run is rarely longer than a few dozen). */
function repeats(hashes: BigUint64Array, parent: bigint | null): boolean {
  if (hashes.length > SMALL_RUN) {
    const seen = new Set<bigint>(hashes);
    return seen.size < hashes.length || (parent !== null && seen.has(parent));
  }
  for (let i = 0; i < hashes.length; i++) {
    const hash = hashes[i]!;
    if (hash === parent) return true;
    for (let j = 0; j < i; j++) if (hashes[j] === hash) return true;
  }
  return false;
}
