/**
 * Composite schemas: arrays, prompt hash lists, objects (with field aliases) and unions told apart by
 * a tag field. Each validates its parts with their own schemas and names the part at fault by its
 * path (`ops[2].request_id`).
 */
import type { JsonOutput } from "../wire/json-write";
import { type Infer, invalid, type JsonSchema, node, type Schema, SchemaError } from "./schema";
import { enumOf, I64_MIN, U64_MAX } from "./schema-scalars";

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
/** Alternative field names, each mapped to the field of the shape it stands for. */
export type Aliases<S extends Shape> = { readonly [alias: string]: keyof S & string };
/**
 * An object schema keeps its fields and their aliases, so a typed client can derive what it may
 * send (either name of an aliased field). A schema built elsewhere may have no aliases at all.
 */
export type ObjectSchema<S extends Shape, A extends Aliases<S> = Record<never, never>> = Schema<
  ObjectOf<S>
> & { readonly shape: S; readonly aliases?: A };

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
export function object<S extends Shape, const A extends Aliases<S> = Record<never, never>>(
  shape: S,
  options: { aliases?: A } = {},
): ObjectSchema<S, A> {
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
  return { ...described, shape, aliases: (options.aliases ?? {}) as A };
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
