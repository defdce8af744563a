/**
 * The selection API's prompt fields (`PromptRequest`, flattened into every selecting body; reference
 * selection §1.2) in serde's words, and the prompt they make. Token ids are u32s read into one
 * `Uint32Array`; `block_hashes` and `sequence_hashes` are i64s (serde's range: a u64 above i64's is
 * refused) bit-cast into one `BigUint64Array`. Which fields a prompt needs is judged after the body
 * parsed, with Dynamo's 400 texts, in Dynamo's order.
 */
import type { BlockMmInfos } from "../../../durable-objects/core/hashing/block-hashes";
import { MAX_HASHES_PER_CALL, MAX_NAME_BYTES } from "../../../durable-objects/limits";
import type { SelectionPrompt } from "../../../durable-objects/selection-types";
import { HttpError } from "../../http/errors";
import { JsonFraction } from "../../wire/json";
import { describe, node, optional, type Schema, SchemaError } from "../schema";
import { I64_MIN } from "../schema-scalars";
import { serdeBool, serdeString, serdeStruct, serdeU64 } from "./serde-schemas";
import { integerOf, invalidType, invalidValue } from "./serde-text";

const U32_MAX = 0xffff_ffff;
const I64_MAX = (1n << 63n) - 1n;
const NUMBER_LIMIT = Number.MAX_SAFE_INTEGER;

/** Fails `path` with serde's `invalid length` for a list over our cap (413: a size cap, not a type). */
function tooLong(path: string, length: number, max: number): never {
  throw new SchemaError(`${path}: invalid length ${length}, expected at most ${max} elements`, "too_large");
}

/** `Vec<u32>` as one `Uint32Array`. */
export function serdeTokens(): Schema<Uint32Array> {
  return node(
    (value, path) => {
      if (!Array.isArray(value)) return invalidType(path, value, "a sequence");
      const out = new Uint32Array(value.length);
      for (let i = 0; i < value.length; i++) {
        const v: unknown = value[i];
        if (typeof v === "number" && v >>> 0 === v) out[i] = v;
        else {
          const integer = integerOf(v);
          const at = `${path}[${i}]`;
          if (integer === undefined) invalidType(at, v, "u32");
          if (integer < 0n || integer > U32_MAX) invalidValue(at, v, "u32");
          out[i] = Number(integer);
        }
      }
      return out;
    },
    { type: "array", items: { type: "integer", minimum: 0, maximum: U32_MAX } },
  );
}

/** `Vec<i64>` as the same 64 bits in one `BigUint64Array`, at most {@link MAX_HASHES_PER_CALL}. */
export function serdeI64Hashes(): Schema<BigUint64Array> {
  return node(
    (value, path) => {
      if (!Array.isArray(value)) return invalidType(path, value, "a sequence");
      if (value.length > MAX_HASHES_PER_CALL) tooLong(path, value.length, MAX_HASHES_PER_CALL);
      const out = new BigUint64Array(value.length);
      for (let i = 0; i < value.length; i++) {
        const v: unknown = value[i];
        const integer = integerOf(v);
        const at = `${path}[${i}]`;
        if (integer === undefined) invalidType(at, v, "i64");
        if (integer < I64_MIN || integer > I64_MAX) invalidValue(at, v, "i64");
        out[i] = integer;
      }
      return out;
    },
    {
      type: "array",
      maxItems: MAX_HASHES_PER_CALL,
      items: { type: "integer", minimum: I64_MIN, maximum: I64_MAX },
      description: "64-bit hashes as i64 (two's complement of the u64).",
    },
  );
}

/** A `usize` that fits a JS number exactly. */
export function serdeUsize(): Schema<number> {
  return node(
    (value, path) => {
      const integer = integerOf(value);
      if (integer === undefined) return invalidType(path, value, "usize");
      if (integer < 0n || integer > BigInt(NUMBER_LIMIT)) return invalidValue(path, value, "usize");
      return Number(integer);
    },
    { type: "integer", minimum: 0, maximum: NUMBER_LIMIT },
  );
}

/** An `f64`: every finite JSON number. */
export function serdeF64(): Schema<number> {
  return node(
    (value, path) => {
      const n = value instanceof JsonFraction ? value.value : value;
      if (typeof n === "number" && Number.isFinite(n)) return n;
      if (typeof n === "bigint") return Number(n);
      return invalidType(path, value, "f64");
    },
    { type: "number", format: "double" },
  );
}

/** A field whose value is read but not judged (Dynamo's policy inputs this service gives no effect). */
export function serdeAny(description: string): Schema<unknown> {
  return node((value) => value, { description });
}

/** `Vec<T>` of any element schema. */
export function serdeSeq<T>(item: Schema<T>): Schema<T[]> {
  return node(
    (value, path) => {
      if (!Array.isArray(value)) return invalidType(path, value, "a sequence");
      return value.map((element, i) => item.parse(element, `${path}[${i}]`));
    },
    { type: "array", items: item.toJsonSchema() },
  );
}

const mmObject = serdeStruct("MmObject", {
  mm_hash: serdeU64(),
  offsets: optional(serdeAny("Token ranges of the object; not hashed.")),
});
const blockMmInfo = serdeStruct("BlockExtraInfo", { mm_objects: serdeSeq(mmObject) });
const blockMmInfos = describe(
  serdeSeq(optional(blockMmInfo)),
  "Per block index: its multimodal objects (their `mm_hash`es join the block's bytes), or null.",
);
const text = serdeString({ minBytes: 0, maxBytes: MAX_NAME_BYTES });

/** The prompt fields every selecting body flattens in. */
export const promptFields = {
  token_ids: optional(describe(serdeTokens(), "The prompt's tokens (u32); hashed by the service.")),
  mm_routing_info: optional(
    serdeStruct("MmRoutingInfo", {
      routing_token_ids: serdeTokens(),
      block_mm_infos: optional(blockMmInfos),
    }),
  ),
  block_mm_infos: optional(blockMmInfos),
  block_hashes: optional(
    describe(serdeI64Hashes(), "Without tokens: the public local block hashes (i64), taken as they are."),
  ),
  sequence_hashes: optional(
    describe(serdeI64Hashes(), "Without tokens: the tracking sequence hashes (i64), taken as they are."),
  ),
  isl_tokens: optional(describe(serdeUsize(), "Without tokens: the prompt's tokens, > 0.")),
  lora_name: optional(text),
  cache_salt: optional(text),
  is_eagle: optional(serdeBool()),
};

type MmInfos = readonly ({ mm_objects: { mm_hash: bigint }[] } | undefined)[] | undefined;

/** The parsed prompt fields. */
export interface PromptBody {
  token_ids?: Uint32Array | undefined;
  mm_routing_info?: { routing_token_ids: Uint32Array; block_mm_infos?: MmInfos } | undefined;
  block_mm_infos?: MmInfos;
  block_hashes?: BigUint64Array | undefined;
  sequence_hashes?: BigUint64Array | undefined;
  isl_tokens?: number | undefined;
  lora_name?: string | undefined;
  cache_salt?: string | undefined;
  is_eagle?: boolean | undefined;
}

function mmInfosOf(infos: MmInfos): BlockMmInfos | null {
  if (!infos) return null;
  return infos.map((info) => info && { mmObjects: info.mm_objects.map((o) => ({ mmHash: o.mm_hash })) });
}

/**
 * The prompt of a body (400 with Dynamo's text when it lacks what it needs). Tokens win: `token_ids`,
 * or `mm_routing_info` with routing tokens; else the hashes, `block_hashes` required unless
 * `blockHashesOptional` (a reservation, which is then not recorded in the cache index).
 */
export function promptOf(body: PromptBody, blockHashesOptional = false): SelectionPrompt {
  const routing = body.mm_routing_info;
  const routingTokens = routing && routing.routing_token_ids.length > 0 ? routing : undefined;
  if (body.token_ids !== undefined || routingTokens) {
    const count = routingTokens ? routingTokens.routing_token_ids.length : body.token_ids!.length;
    // Ours: an empty prompt would cost nothing and divide by its zero blocks in the credit decay.
    if (count === 0) throw new HttpError(400, "isl_tokens must be greater than 0");
    return {
      kind: "tokens",
      tokens: {
        tokenIds: body.token_ids ?? new Uint32Array(0),
        blockMmInfos: mmInfosOf(body.block_mm_infos),
        mmRoutingInfo: routingTokens && {
          routingTokenIds: routingTokens.routing_token_ids,
          blockMmInfos: mmInfosOf(routingTokens.block_mm_infos),
        },
        loraName: body.lora_name,
        cacheSalt: body.cache_salt,
        isEagle: body.is_eagle,
      },
    };
  }
  const { block_hashes: blockHashes, sequence_hashes: sequenceHashes, isl_tokens: isl } = body;
  if (blockHashes === undefined && !blockHashesOptional)
    throw new HttpError(400, "block_hashes is required without token_ids");
  if (sequenceHashes === undefined) throw new HttpError(400, "sequence_hashes is required without token_ids");
  if (isl === undefined) throw new HttpError(400, "isl_tokens is required without token_ids");
  if (isl === 0) throw new HttpError(400, "isl_tokens must be greater than 0");
  if (blockHashes !== undefined && blockHashes.length !== sequenceHashes.length) {
    throw new HttpError(
      400,
      `block_hashes length ${blockHashes.length} must match sequence_hashes length ${sequenceHashes.length}`,
    );
  }
  return {
    kind: "hashes",
    ...(blockHashes !== undefined && { blockHashes }),
    sequenceHashes,
    islTokens: isl,
  };
}
