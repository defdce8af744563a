/**
 * The request-validation DSL. One schema both validates a decoded body (JSON or MessagePack) into a
 * typed value and describes itself as JSON Schema, so the OpenAPI document is generated from the
 * same definitions the routes enforce. Integer kinds never round: a JSON `5.0`
 * ({@link JsonFraction}), an unsafe float or an out-of-range bigint is rejected, not coerced.
 */
import { JsonFraction } from "./json";
import type { JsonOutput } from "./json-write";

/** A JSON Schema (2020-12, as used by OpenAPI 3.1) node; bigint bounds are written exactly. */
export type JsonSchema = { readonly [keyword: string]: JsonOutput | undefined };

/**
 * `invalid`: a missing or mistyped field (422). `too_large`: over a size cap (413). `conflict`: a
 * field and its alias disagree (400, as Dynamo answers it).
 */
export type SchemaErrorKind = "invalid" | "too_large" | "conflict";

export class SchemaError extends Error {
  override readonly name = "SchemaError";
  constructor(
    message: string,
    readonly kind: SchemaErrorKind = "invalid",
  ) {
    super(message);
  }
}

export interface Schema<T> {
  /** Whether an object may omit the field (or send `null`, which serde reads as `None`). */
  readonly optional: boolean;
  /** Validates `value` found at `path` (a field path like `ops[2].request_id`; "" is the whole body). */
  parse(value: unknown, path: string): T;
  toJsonSchema(): JsonSchema;
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

/** A field a client may leave out (`optional`, `withDefault`); the literal lets types tell them apart. */
export type OmittableSchema<T> = Schema<T> & { readonly optional: true };

const U32_MAX = 0xffff_ffff;
const U64_MAX = (1n << 64n) - 1n;
const I64_MIN = -(1n << 63n);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function invalid(path: string, expected: string): never {
  throw new SchemaError(
    path === "" ? `request body: expected ${expected}` : `field \`${path}\`: expected ${expected}`,
  );
}

function node<T>(
  parse: (value: unknown, path: string) => T,
  jsonSchema: JsonSchema,
  optional = false,
): Schema<T> {
  return { optional, parse, toJsonSchema: () => jsonSchema };
}

/** An unsigned 32-bit integer (ranks, sizes, token counts). */
export function u32(): Schema<number> {
  return node(
    (value, path) => {
      if (typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= U32_MAX)
        return value;
      if (typeof value === "bigint" && value >= 0n && value <= U32_MAX) return Number(value);
      return invalid(path, "an unsigned 32-bit integer");
    },
    { type: "integer", minimum: 0, maximum: U32_MAX },
  );
}

/** An unsigned 64-bit integer (worker ids), kept exact as bigint. */
export function u64(): Schema<bigint> {
  return node(
    (value, path) => {
      // A MessagePack float64 can hold an integral value above 2^53 that is already rounded.
      if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
      if (typeof value === "bigint" && value >= 0n && value <= U64_MAX) return value;
      return invalid(path, "an unsigned 64-bit integer");
    },
    { type: "integer", minimum: 0, maximum: U64_MAX },
  );
}

/** A non-negative integer that fits a JS number exactly (token counts). */
export function uint(): Schema<number> {
  return node(
    (value, path) => {
      if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
      if (typeof value === "bigint" && value >= 0n && value <= MAX_SAFE) return Number(value);
      return invalid(path, `a non-negative integer up to ${Number.MAX_SAFE_INTEGER}`);
    },
    { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
  );
}

/** A finite number; integers and fractions alike (durations). */
export function float(options: { min?: number } = {}): Schema<number> {
  const { min } = options;
  const expected = min === undefined ? "a finite number" : `a finite number ≥ ${min}`;
  return node(
    (value, path) => {
      const n =
        typeof value === "number"
          ? value
          : value instanceof JsonFraction
            ? value.value
            : typeof value === "bigint"
              ? Number(value)
              : Number.NaN;
      if (!Number.isFinite(n) || (min !== undefined && n < min)) return invalid(path, expected);
      return n;
    },
    { type: "number", minimum: min },
  );
}

/** A string whose UTF-8 encoding is `minBytes..maxBytes` long (Dynamo's limits are in bytes). */
export function string(options: { minBytes: number; maxBytes: number }): Schema<string> {
  const { minBytes, maxBytes } = options;
  const expected = `a string of ${minBytes}..${maxBytes} UTF-8 bytes`;
  return node(
    (value, path) => {
      if (typeof value !== "string") return invalid(path, expected);
      // UTF-8 takes 1..3 bytes per UTF-16 unit, so most strings are settled without counting.
      if (value.length >= minBytes && value.length * 3 <= maxBytes) return value;
      const bytes = utf8Length(value);
      if (bytes < minBytes || bytes > maxBytes) return invalid(path, expected);
      return value;
    },
    // JSON Schema counts code points; a byte bound of n implies at most n code points.
    {
      type: "string",
      minLength: minBytes,
      maxLength: maxBytes,
      description: `${minBytes}..${maxBytes} UTF-8 bytes`,
    },
  );
}

export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // Surrogate pairs are 2 units and 4 bytes: one extra byte per unit.
    if (c >= 0x800) bytes += c >= 0xd800 && c <= 0xdfff ? 1 : 2;
    else if (c >= 0x80) bytes += 1;
  }
  return bytes;
}

export function enumOf<const V extends string>(values: readonly V[]): Schema<V> {
  const expected = `one of ${values.map((v) => JSON.stringify(v)).join(", ")}`;
  return node(
    (value, path) => {
      if (typeof value === "string" && (values as readonly string[]).includes(value)) return value as V;
      return invalid(path, expected);
    },
    { type: "string", enum: values },
  );
}

/** Omitted or `null` reads as `undefined`. */
export function optional<T>(schema: Schema<T>): OmittableSchema<T | undefined> {
  return node(
    (value, path) => (value === undefined || value === null ? undefined : schema.parse(value, path)),
    schema.toJsonSchema(),
    true,
  ) as OmittableSchema<T | undefined>;
}

/** Omitted or `null` reads as `fallback`. */
export function withDefault<T extends JsonOutput>(schema: Schema<T>, fallback: T): OmittableSchema<T> {
  return node(
    (value, path) => (value === undefined || value === null ? fallback : schema.parse(value, path)),
    { ...schema.toJsonSchema(), default: fallback },
    true,
  ) as OmittableSchema<T>;
}

export function describe<T>(schema: Schema<T>, description: string): Schema<T> {
  return node(schema.parse, { ...schema.toJsonSchema(), description }, schema.optional);
}

/** An array of `item`; more than `maxItems` is a "too large" error (413), not a validation error. */
export function array<T>(item: Schema<T>, options: { maxItems?: number } = {}): Schema<T[]> {
  const { maxItems } = options;
  return node(
    (value, path) => {
      if (!Array.isArray(value)) return invalid(path, "an array");
      if (maxItems !== undefined && value.length > maxItems) {
        throw new SchemaError(
          `field \`${path}\`: at most ${maxItems} items allowed, got ${value.length}`,
          "too_large",
        );
      }
      return value.map((element, i) => item.parse(element, `${path}[${i}]`));
    },
    { type: "array", items: item.toJsonSchema(), maxItems },
  );
}

/**
 * Prompt block hashes: 64-bit integers given signed (i64) or unsigned (u64), stored as the same
 * 64 bits, so `-1` and `18446744073709551615` are one hash.
 */
export function hashes(options: { maxItems: number }): Schema<BigUint64Array> {
  const { maxItems } = options;
  const expected = "a 64-bit integer (-9223372036854775808..18446744073709551615)";
  return node(
    (value, path) => {
      if (!Array.isArray(value)) return invalid(path, "an array of 64-bit integers");
      if (value.length > maxItems) {
        throw new SchemaError(
          `field \`${path}\`: at most ${maxItems} hashes allowed, got ${value.length}`,
          "too_large",
        );
      }
      const out = new BigUint64Array(value.length);
      for (let i = 0; i < value.length; i++) {
        const h: unknown = value[i];
        // BigUint64Array stores modulo 2^64, which is exactly the i64 → u64 reinterpretation.
        if (typeof h === "number" && Number.isSafeInteger(h)) out[i] = BigInt(h);
        else if (typeof h === "bigint" && h >= I64_MIN && h <= U64_MAX) out[i] = h;
        else invalid(`${path}[${i}]`, expected);
      }
      return out;
    },
    {
      type: "array",
      maxItems,
      items: { type: "integer", minimum: I64_MIN, maximum: U64_MAX },
      description: "64-bit block hashes, signed or unsigned (-1 ≡ 18446744073709551615)",
    },
  );
}

export type Shape = { readonly [field: string]: Schema<unknown> };
export type ObjectOf<S extends Shape> = { [K in keyof S]: Infer<S[K]> };
/** An object schema keeps its fields, so a typed client can derive what it may send. */
export type ObjectSchema<S extends Shape> = Schema<ObjectOf<S>> & { readonly shape: S };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === null || proto === Object.prototype;
}

/**
 * An object with the fields of `shape`; unknown keys are ignored (as serde does). `aliases` maps an
 * alternative field name to its canonical one (`routing_group` → `tenant_id`): either may be sent,
 * both only when they agree.
 */
export function object<S extends Shape>(
  shape: S,
  options: { aliases?: { readonly [alias: string]: keyof S & string } } = {},
): ObjectSchema<S> {
  const fields = Object.keys(shape);
  const aliasOf = new Map<string, string>(Object.entries(options.aliases ?? {}).map(([a, f]) => [f, a]));
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const field of fields) {
    const schema = shape[field] as Schema<unknown>;
    properties[field] = schema.toJsonSchema();
    if (!schema.optional) required.push(field);
    const alias = aliasOf.get(field);
    if (alias !== undefined)
      properties[alias] = { ...schema.toJsonSchema(), description: `Alias of \`${field}\`.` };
  }
  const described = node(
    (value, path) => {
      if (!isPlainObject(value)) return invalid(path, "an object");
      const prefix = path === "" ? "" : `${path}.`;
      const out: Record<string, unknown> = {};
      for (const field of fields) {
        const schema = shape[field] as Schema<unknown>;
        let name = field;
        let raw = Object.hasOwn(value, field) ? value[field] : undefined;
        const alias = aliasOf.get(field);
        if (alias !== undefined && Object.hasOwn(value, alias) && value[alias] != null) {
          const viaAlias = schema.parse(value[alias], prefix + alias);
          if (raw != null && schema.parse(raw, prefix + field) !== viaAlias) {
            throw new SchemaError(
              `fields \`${prefix + field}\` and \`${prefix + alias}\` are aliases but differ; send one of them`,
              "conflict",
            );
          }
          raw = value[alias];
          name = alias;
        }
        if (raw === undefined && !schema.optional)
          throw new SchemaError(`missing field \`${prefix + field}\``);
        out[field] = schema.parse(raw, prefix + name);
      }
      return out as ObjectOf<S>;
    },
    { type: "object", properties, required },
  );
  return { ...described, shape };
}

type TaggedOf<K extends string, V extends { readonly [tag: string]: Schema<object> }> = {
  [T in keyof V & string]: { [P in K]: T } & Infer<V[T]>;
}[keyof V & string];

/**
 * One of several object shapes, told apart by the string field `key` (`{"op": "add", …}`): the
 * variant named by `key` validates the object, and the result carries `key` too.
 */
export function tagged<const K extends string, const V extends { readonly [tag: string]: Schema<object> }>(
  key: K,
  variants: V,
): Schema<TaggedOf<K, V>> {
  const tags = Object.keys(variants);
  const tagSchema = enumOf(tags);
  return node(
    (value, path) => {
      if (!isPlainObject(value)) return invalid(path, "an object");
      const at = path === "" ? key : `${path}.${key}`;
      if (!Object.hasOwn(value, key) || value[key] === undefined)
        throw new SchemaError(`missing field \`${at}\``);
      const tag = tagSchema.parse(value[key], at);
      // Assigned, not spread: V8 spreads through a slow generic path, and a batch has 4,096 of these.
      const out = variants[tag]!.parse(value, path) as Record<string, unknown>;
      out[key] = tag;
      return out as TaggedOf<K, V>;
    },
    {
      oneOf: tags.map((tag) => {
        const { properties, required, ...rest } = variants[tag]!.toJsonSchema();
        return {
          ...rest,
          properties: { [key]: { const: tag }, ...(properties as Record<string, JsonOutput>) },
          required: [key, ...((required as string[] | undefined) ?? [])],
        };
      }),
    },
  );
}
