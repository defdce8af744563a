/**
 * What `#[derive(Deserialize)]` accepts, for the field types the Dynamo client declares: a decoder
 * throws where serde_json would return an error, so an answer the client could not decode fails the
 * test. Unknown fields are ignored (no `deny_unknown_fields` in the client's types); a missing
 * `Option` is `None`, as is `null`; `#[serde(default)]` fills a missing field but not a `null` one.
 */
import type { Json } from "./json";

export type Decoder<T> = (value: Json | undefined, path: string) => T;

const fail = (path: string, want: string, value: Json | undefined): never => {
  const got = typeof value === "bigint" ? `${value}` : JSON.stringify(value);
  throw new TypeError(`${path}: expected ${want}, got ${got}`);
};

const unsigned =
  (bits: number): Decoder<bigint> =>
  (value, path) => {
    if (typeof value !== "bigint" || value < 0n || value >= 1n << BigInt(bits)) {
      return fail(path, `u${bits}`, value);
    }
    return value;
  };

export const u64 = unsigned(64);
export const u32 = unsigned(32);
/** `usize` on the 64-bit targets Dynamo ships for. */
export const usize = u64;

export const i64: Decoder<bigint> = (value, path) =>
  typeof value === "bigint" && value >= -(1n << 63n) && value < 1n << 63n ? value : fail(path, "i64", value);

export const string: Decoder<string> = (value, path) =>
  typeof value === "string" ? value : fail(path, "a string", value);

export const bool: Decoder<boolean> = (value, path) =>
  typeof value === "boolean" ? value : fail(path, "a boolean", value);

/** `Option<T>`: absent or `null` is `None` (here `undefined`). */
export const option =
  <T>(inner: Decoder<T>): Decoder<T | undefined> =>
  (value, path) =>
    value === undefined || value === null ? undefined : inner(value, path);

/** `#[serde(default)]` on a non-`Option` field: only an absent field takes the default. */
export const withDefault =
  <T>(inner: Decoder<T>, fallback: () => T): Decoder<T> =>
  (value, path) =>
    value === undefined ? fallback() : inner(value, path);

export const vec =
  <T>(inner: Decoder<T>): Decoder<T[]> =>
  (value, path) =>
    Array.isArray(value)
      ? value.map((item, i) => inner(item, `${path}[${i}]`))
      : fail(path, "a sequence", value);

/** `HashMap<u32, String>`: a JSON object whose keys parse as `u32`. */
export const u32StringMap: Decoder<Map<bigint, string>> = (value, path) => {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return fail(path, "a map", value);
  const map = new Map<bigint, string>();
  for (const [key, item] of Object.entries(value)) {
    if (!/^\d+$/.test(key)) fail(`${path} key`, "u32", key);
    map.set(u32(BigInt(key), `${path} key`), string(item, `${path}.${key}`));
  }
  return map;
};

type Fields<T> = { [K in keyof T]: Decoder<T[K]> };

/** A struct: each field decoded from its key; a required field that is absent is an error. */
export const struct =
  <T>(fields: Fields<T>): Decoder<T> =>
  (value, path) => {
    if (value === null || typeof value !== "object" || Array.isArray(value))
      return fail(path, "a struct", value);
    const out = {} as T;
    for (const key of Object.keys(fields) as (keyof T & string)[]) {
      out[key] = fields[key]((value as Record<string, Json>)[key], `${path}.${key}`);
    }
    return out;
  };
