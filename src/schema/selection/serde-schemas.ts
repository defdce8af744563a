/**
 * Schemas of the project's DSL (`../schema.ts`) whose refusals are serde's (`serde-text.ts`), for
 * the Rust types of Dynamo's selection-service requests: `u64`, `u32`, `f32`, `bool`, `String`,
 * unit enums, `HashSet<String>`, `HashMap<u32, String>`, `HashMap<String, String>` and structs.
 * `Option<T>` is the DSL's `optional` (absent or `null` is `None`, as in serde). Two departures,
 * both answering 422 with a text in serde's form where serde_json would answer 400 from its parser:
 * an enum given a non-string, and a rank-map key that is not a decimal number in quotes.
 */
import { JsonFraction } from "../../wire/json";
import type { JsonOutput } from "../../wire/json-write";
import { type JsonSchema, node, type OmittableSchema, type Schema, SchemaError } from "../schema";
import type { ObjectOf, ObjectSchema, Shape } from "../schema-composites";
import { utf8Length } from "../schema-scalars";
import { AXUM_JSON_DATA_ERROR, integerOf, invalidType, invalidValue, oneOf, serdeError } from "./serde-text";

const U32_MAX = 0xffff_ffff;

export function serdeU64(): Schema<bigint> {
  return node(
    (value, path) => {
      const integer = integerOf(value);
      if (integer === undefined) return invalidType(path, value, "u64");
      if (integer < 0n) return invalidValue(path, value, "u64");
      return integer;
    },
    { type: "integer", minimum: 0, maximum: (1n << 64n) - 1n },
  );
}

export function serdeU32(): Schema<number> {
  return node(
    (value, path) => {
      const integer = integerOf(value);
      if (integer === undefined) return invalidType(path, value, "u32");
      if (integer < 0n || integer > U32_MAX) return invalidValue(path, value, "u32");
      return Number(integer);
    },
    { type: "integer", minimum: 0, maximum: U32_MAX },
  );
}

/**
 * An `f32`: a JSON number, rounded to single precision and kept as the shortest decimal that
 * rounds back to it (what serde_json writes for the field). One that overflows f32 is refused here,
 * where Dynamo would keep infinity and write it back as `null`.
 */
export function serdeF32(): Schema<number> {
  return node(
    (value, path) => {
      const n = value instanceof JsonFraction ? value.value : value;
      const single = typeof n === "number" || typeof n === "bigint" ? Math.fround(Number(n)) : undefined;
      if (single === undefined) return invalidType(path, value, "f32");
      if (!Number.isFinite(single)) return invalidValue(path, value, "a finite f32");
      return shortestSingle(single);
    },
    { type: "number", format: "float" },
  );
}

function shortestSingle(single: number): number {
  for (let digits = 1; digits < 9; digits++) {
    const candidate = Number(single.toPrecision(digits));
    if (Math.fround(candidate) === single) return candidate;
  }
  return Number(single.toPrecision(9));
}

export function serdeBool(): Schema<boolean> {
  return node((value, path) => (typeof value === "boolean" ? value : invalidType(path, value, "a boolean")), {
    type: "boolean",
  });
}

/** A `String` of `minBytes..maxBytes` UTF-8 bytes: our bound, said in serde's `invalid length` form. */
export function serdeString(options: { minBytes: number; maxBytes: number }): Schema<string> {
  const { minBytes, maxBytes } = options;
  const expected =
    minBytes === 0
      ? `a string of at most ${maxBytes} UTF-8 bytes`
      : `a string of ${minBytes}..${maxBytes} UTF-8 bytes`;
  return node(
    (value, path) => {
      if (typeof value !== "string") return invalidType(path, value, "a string");
      const bytes = utf8Length(value);
      if (bytes < minBytes || bytes > maxBytes)
        serdeError(path, `invalid length ${bytes}, expected ${expected}`);
      return value;
    },
    {
      type: "string",
      minLength: minBytes,
      maxLength: maxBytes,
      description: `${minBytes}..${maxBytes} UTF-8 bytes`,
    },
  );
}

/** A unit enum of `#[serde(rename_all = "snake_case")]`, given as its variant's name. */
export function serdeEnum<const V extends string>(values: readonly V[]): Schema<V> {
  const expected = oneOf(values);
  return node(
    (value, path) => {
      if (typeof value !== "string") return invalidType(path, value, expected);
      if (!(values as readonly string[]).includes(value)) {
        return serdeError(path, `unknown variant \`${value}\`, expected ${expected}`);
      }
      return value as V;
    },
    { type: "string", enum: values },
  );
}

export function serdeStringSet(item: Schema<string>): Schema<readonly string[]> {
  return node(
    (value, path) => {
      if (!Array.isArray(value)) return invalidType(path, value, "a sequence");
      return value.map((element, i) => item.parse(element, `${path}[${i}]`));
    },
    { type: "array", items: item.toJsonSchema(), uniqueItems: true },
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === null || proto === Object.prototype;
}

/** Map keys checked and rewritten by `key` (which throws for a bad one); values by `item`. */
function mapOf(
  key: (raw: string, path: string) => string,
  item: Schema<string>,
  keySchema: JsonSchema,
): Schema<Readonly<Record<string, string>>> {
  return node(
    (value, path) => {
      if (!isPlainObject(value)) return invalidType(path, value, "a map");
      // No prototype: a `__proto__` key stays an ordinary entry.
      const out: Record<string, string> = Object.create(null);
      for (const raw of Object.keys(value)) {
        out[key(raw, path)] = item.parse(value[raw], path === "" ? raw : `${path}.${raw}`);
      }
      return out;
    },
    { type: "object", propertyNames: keySchema, additionalProperties: item.toJsonSchema() },
  );
}

export function serdeStringMap(
  keys: Schema<string>,
  item: Schema<string>,
): Schema<Readonly<Record<string, string>>> {
  return mapOf((raw, path) => keys.parse(raw, path), item, keys.toJsonSchema());
}

const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;
const JSON_INTEGER = /^-?(?:0|[1-9][0-9]*)$/;

/**
 * A `HashMap<u32, String>` (per-rank URLs): serde_json reads each key as a JSON number inside the
 * quotes, so `"3"` is rank 3, `"-1"` and `"4294967296"` are out of range and `"1.5"` is a float.
 * Keys come out in canonical decimal form (`"-0"` is rank `"0"`).
 */
export function serdeRankMap(item: Schema<string>): Schema<Readonly<Record<string, string>>> {
  const rank = serdeU32();
  return mapOf(
    (raw, path) => {
      if (!JSON_NUMBER.test(raw)) serdeError(path, "invalid value: expected key to be a number in quotes");
      // Read as the JSON parser reads a literal: an integer of up to 20 digits exactly, else a float.
      const number = JSON_INTEGER.test(raw) && raw.length <= 20 ? BigInt(raw) : new JsonFraction(Number(raw));
      return String(rank.parse(number, path));
    },
    item,
    { type: "string", pattern: "^(0|[1-9][0-9]*)$", description: "A DP rank (u32) in decimal." },
  );
}

/**
 * A field with `#[serde(default)]`: when absent it is `fallback`. Unlike `Option`, an explicit
 * `null` is not absent: serde hands it to the type, which refuses it.
 */
export function serdeDefault<T extends JsonOutput>(schema: Schema<T>, fallback: T): OmittableSchema<T> {
  return node(
    (value, path) => (value === undefined ? fallback : schema.parse(value, path)),
    { ...schema.toJsonSchema(), default: fallback },
    true,
  ) as OmittableSchema<T>;
}

/**
 * A struct: fields read in the body's order, so the first wrong one is the error, as serde reports
 * it; then the first missing required field (declaration order). Unknown fields are ignored (no
 * `deny_unknown_fields` in Dynamo's request types).
 */
export function serdeStruct<S extends Shape>(name: string, shape: S): ObjectSchema<S> {
  const fields = Object.keys(shape);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const field of fields) {
    const schema = shape[field] as Schema<unknown>;
    properties[field] = schema.toJsonSchema();
    if (!schema.optional) required.push(field);
  }
  const described = node(
    (value, path) => {
      if (!isPlainObject(value)) return invalidType(path, value, `struct ${name}`);
      const prefix = path === "" ? "" : `${path}.`;
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(value)) {
        if (Object.hasOwn(shape, key))
          out[key] = (shape[key] as Schema<unknown>).parse(value[key], prefix + key);
      }
      for (const field of fields) {
        if (Object.hasOwn(out, field)) continue;
        const schema = shape[field] as Schema<unknown>;
        if (!schema.optional) serdeError(path, `missing field \`${field}\``);
        out[field] = schema.parse(undefined, prefix + field);
      }
      return out as ObjectOf<S>;
    },
    { type: "object", properties, required },
  );
  return { ...described, shape };
}

/** A whole body: a refusal of its contents gets axum's sentence in front (still 422). */
export function axumJsonBody<S extends Schema<unknown>>(schema: S): S {
  return {
    ...schema,
    parse(value: unknown, path: string) {
      try {
        return schema.parse(value, path);
      } catch (err) {
        if (err instanceof SchemaError && err.kind === "invalid") {
          throw new SchemaError(`${AXUM_JSON_DATA_ERROR}: ${err.message}`);
        }
        throw err;
      }
    },
  };
}
