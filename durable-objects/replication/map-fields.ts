/**
 * Reading maps field by field: keys in any order, a key of bit 0 unknown (its value skipped, for
 * forward compatibility), a known key at most once, required ones checked at the end.
 */
import { CodecError } from "./codec-error";
import type { MsgpackReader } from "./msgpack-reader";

/** Reads a map, calling `field` for each key; returns a bitmask of the keys `field` knew (cold paths). */
export function readMap(r: MsgpackReader, what: string, field: (key: string) => number): number {
  let seen = 0;
  for (let n = r.mapHeader(what); n > 0; n--) {
    const at = r.pos;
    const key = r.key(what);
    seen = once(r, seen, field(key), what, key, at);
  }
  return seen;
}

/** Adds a field's bit to `seen`; a key of bit 0 is unknown, and its value is skipped. */
export function once(
  r: MsgpackReader,
  seen: number,
  bit: number,
  what: string,
  key: string,
  at: number,
): number {
  if (bit === 0) r.skip(`${what}.${key}`);
  else if (seen & bit) r.fail(what, `no repeated key "${key}"`, at);
  return seen | bit;
}

export function requireKeys(what: string, seen: number, required: number, names: string): void {
  if ((seen & required) !== required) throw new CodecError(`event-codec: ${what} lacks one of ${names}`);
}

/** A string that must be one of `values` (a closed union such as a worker type). */
export function oneOf<T extends string>(r: MsgpackReader, what: string, values: readonly T[]): T {
  const at = r.pos;
  const value = r.key(what);
  if (!(values as readonly string[]).includes(value)) r.fail(what, values.join(" | "), at);
  return value as T;
}
