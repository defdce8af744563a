/**
 * Scalar schemas: integer kinds, finite numbers, byte-bounded strings and string enums. Integer kinds
 * never round: a JSON `5.0` ({@link JsonFraction}), an unsafe float or an out-of-range bigint is
 * rejected, not coerced.
 */
import { JsonFraction } from "../wire/json";
import { invalid, node, type Schema } from "./schema";

export const U32_MAX = 0xffff_ffff;
export const U64_MAX = (1n << 64n) - 1n;
export const I64_MIN = -(1n << 63n);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Text read as Rust's `u64::from_str` reads it (decimal digits after an optional `+`, leading zeros
 * allowed): the value, or undefined for anything else or out of range. For paths and query strings.
 */
export function decimalU64(raw: string): bigint | undefined {
  const digits = (raw.startsWith("+") ? raw.slice(1) : raw).replace(/^0+(?=[0-9])/, "");
  // 2^64 has 20 digits: a longer run is out of range, and is refused before BigInt parses it.
  const id = /^[0-9]{1,20}$/.test(digits) ? BigInt(digits) : undefined;
  return id !== undefined && id <= U64_MAX ? id : undefined;
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

/** An integer in `min..max` (both safe; a lease's `ttl_ms`), refused rather than clamped outside it. */
export function intIn(min: number, max: number): Schema<number> {
  const expected = `an integer from ${min} to ${max}`;
  return node(
    (value, path) => {
      const n =
        typeof value === "bigint" ? (value >= min && value <= max ? Number(value) : Number.NaN) : value;
      if (typeof n === "number" && Number.isInteger(n) && n >= min && n <= max) return n;
      return invalid(path, expected);
    },
    { type: "integer", minimum: min, maximum: max },
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
