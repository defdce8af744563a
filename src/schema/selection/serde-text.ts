/**
 * `src/schema/selection/`: the selection API's request schemas and answers. Its bodies are refused
 * in serde's words (this file, and the schemas that use them in `serde-schemas.ts`), the catalog's
 * requests (`catalog.ts`), their answers' shapes (`catalog-answers.ts`) and the record as the wire
 * carries it (`catalog-wire.ts`).
 *
 * Dynamo's selection service answers a body that does not fit its type with axum's rejection text
 * (reference selection §1.1), which is serde's error behind a fixed sentence:
 * `Failed to deserialize the JSON body into the target type: {path}: {error} at line {l} column {c}`.
 * Ours is the same but for the position: our schemas judge the decoded value, not serde_json's
 * reading of the text, and a MessagePack body has no lines. Clients match on the sentence and the
 * field (Dynamo's own tests assert substrings), which both remain.
 */
import { JsonFraction } from "../../wire/json";
import { SchemaError } from "../schema";
import { I64_MIN, U64_MAX } from "../schema-scalars";

/** axum's `JsonDataError` sentence: the body is JSON, but not of the handler's type (422). */
export const AXUM_JSON_DATA_ERROR = "Failed to deserialize the JSON body into the target type";

/** An integer as serde_json reads one (i64 or u64 range), or undefined for anything else. */
export function integerOf(value: unknown): bigint | undefined {
  if (typeof value === "number" && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === "bigint" && value >= I64_MIN && value <= U64_MAX) return value;
  return undefined;
}

/** A number serde_json reads as a float: a fraction, an exponent, or an integer beyond 64 bits. */
function floatOf(value: unknown): number | undefined {
  if (value instanceof JsonFraction) return value.value;
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  return undefined;
}

/**
 * serde_json's `Unexpected` wording for a decoded value: `null`, ``boolean `true` ``,
 * ``integer `5` ``, ``floating point `1.5` ``, `string "x"`, `sequence`, `map`.
 */
export function unexpected(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean") return `boolean \`${value}\``;
  if (typeof value === "string") return `string ${rustDebugString(value)}`;
  const integer = integerOf(value);
  if (integer !== undefined) return `integer \`${integer}\``;
  const float = floatOf(value);
  if (float !== undefined) return `floating point \`${rustFloat(float)}\``;
  if (Array.isArray(value)) return "sequence";
  if (value instanceof Uint8Array) return "byte array";
  return "map";
}

/**
 * A float as serde_json prints it (the `ryu` crate): the shortest digits that read back, in plain
 * notation while the point falls within 16 digits (`5.0`, `0.0001`), else scientific (`1e-7`,
 * `1.8446744073709552e19`). JS finds the same shortest digits; only the layout differs.
 */
export function rustFloat(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (!Number.isFinite(n)) return n > 0 ? "inf" : "-inf";
  const sign = n < 0 || Object.is(n, -0) ? "-" : "";
  if (n === 0) return `${sign}0.0`;
  const [mantissa = "", exponent = "0"] = Math.abs(n).toExponential().split("e");
  const digits = mantissa.replace(".", "");
  // The decimal point sits `point` digits from the start of `digits`.
  const point = Number(exponent) + 1;
  const length = digits.length;
  if (length <= point && point <= 16) return `${sign}${digits}${"0".repeat(point - length)}.0`;
  if (0 < point && point <= 16) return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
  if (-5 < point && point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  const scientific = length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
  return `${sign}${scientific}e${point - 1}`;
}

/**
 * A string as Rust's `Debug` prints it: quoted, with `\"`, `\\`, `\n`, `\r`, `\t`, `\0` and other
 * control characters as `\u{…}`. Rust also escapes some unprintable non-control characters; those
 * print as they are here.
 */
export function rustDebugString(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (char === '"' || char === "\\") out += `\\${char}`;
    else if (char === "\n") out += "\\n";
    else if (char === "\r") out += "\\r";
    else if (char === "\t") out += "\\t";
    else if (char === "\0") out += "\\0";
    else if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || (code >= 0xd800 && code <= 0xdfff)) {
      out += `\\u{${code.toString(16)}}`;
    } else out += char;
  }
  return `${out}"`;
}

/** serde's `expected one of …` list of variants. */
export function oneOf(values: readonly string[]): string {
  const quoted = values.map((value) => `\`${value}\``);
  if (quoted.length <= 1) return quoted.join("");
  if (quoted.length === 2) return `${quoted[0]} or ${quoted[1]}`;
  return `one of ${quoted.join(", ")}`;
}

/** serde_path_to_error's prefix: the field path, then the error; none at the body's root. */
export function serdeError(path: string, message: string): never {
  throw new SchemaError(path === "" ? message : `${path}: ${message}`);
}

export function invalidType(path: string, value: unknown, expected: string): never {
  return serdeError(path, `invalid type: ${unexpected(value)}, expected ${expected}`);
}

export function invalidValue(path: string, value: unknown, expected: string): never {
  return serdeError(path, `invalid value: ${unexpected(value)}, expected ${expected}`);
}
