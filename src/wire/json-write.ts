/**
 * Exact JSON writing for answers: `JSON.stringify` refuses bigint, and 64-bit worker ids must be
 * written as exact integer literals, never rounded through `number`.
 */
import { JsonFraction } from "./json";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** What `stringifyJson` can write; `undefined` object fields are skipped, as in `JSON.stringify`. */
export type JsonOutput =
  | null
  | boolean
  | number
  | bigint
  | string
  | JsonFraction
  | readonly JsonOutput[]
  | { readonly [key: string]: JsonOutput | undefined };

/** Quoted field names with their colon; response rows repeat a handful of names hundreds of times. */
const KEY_CACHE = new Map<string, string>();
const KEY_CACHE_SIZE = 256;

/** Whether JSON writes `text` verbatim between quotes: no quote, backslash, control or surrogate unit. */
function isPlain(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === QUOTE || c === BACKSLASH || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

function quote(text: string): string {
  return text.length <= 64 && isPlain(text) ? `"${text}"` : JSON.stringify(text);
}

function keyPrefix(key: string): string {
  let prefix = KEY_CACHE.get(key);
  if (prefix === undefined) {
    prefix = `${quote(key)}:`;
    if (KEY_CACHE.size < KEY_CACHE_SIZE) KEY_CACHE.set(key, prefix);
  }
  return prefix;
}

/** Writes `value` as JSON; bigint as an exact integer literal, non-finite numbers as `null`. */
export function stringifyJson(value: JsonOutput): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return quote(value);
    case "number":
      return Number.isFinite(value) ? String(value) : "null";
    case "bigint":
      return value.toString();
    case "boolean":
      return value ? "true" : "false";
  }
  if (value instanceof JsonFraction) return stringifyJson(value.value);
  if (Array.isArray(value)) {
    const items: readonly JsonOutput[] = value;
    let out = "[";
    for (let i = 0; i < items.length; i++) {
      if (i > 0) out += ",";
      out += stringifyJson(items[i] as JsonOutput);
    }
    return out + "]";
  }
  const object = value as { readonly [key: string]: JsonOutput | undefined };
  let out = "{";
  let first = true;
  for (const key of Object.keys(object)) {
    const field = object[key];
    if (field === undefined) continue;
    out += (first ? "" : ",") + keyPrefix(key) + stringifyJson(field);
    first = false;
  }
  return out + "}";
}
