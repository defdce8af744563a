/**
 * Exact 64-bit JSON for the typed client. hono/client writes bodies with `JSON.stringify` and reads
 * answers with `JSON.parse`, which refuse bigint and round integers above 2^53. Worker ids and prompt
 * hashes are 64-bit, and ids above 2^53 are common, so for those use `postExact` (exact body) and
 * `readExact` (exact answer), or speak MessagePack (`application/msgpack`, int64/uint64 on the wire).
 */
import type { ClientRequestOptions, ClientResponse } from "hono/client";
import { JsonFraction, type JsonValue, parseJson } from "../wire/json";
import { type JsonOutput, stringifyJson } from "../wire/json-write";

/** `T` with every number allowed as bigint too: what an exact 64-bit body may hold. */
export type Exactly<T> = T extends number
  ? number | bigint
  : T extends readonly (infer E)[]
    ? Exactly<E>[]
    : T extends object
      ? { [K in keyof T]: Exactly<T[K]> }
      : T;

type JsonEndpoint<R> = (args: { json: never }, options?: ClientRequestOptions) => Promise<R>;

/**
 * Calls a typed POST endpoint with `body` written exactly: bigint fields become exact JSON integers
 * (`client.register.$post` would throw on them). `postExact(client.register.$post, { worker_id: 2n ** 64n - 59n, … })`.
 */
export function postExact<A extends { json: unknown }, R>(
  endpoint: (args: A, options?: ClientRequestOptions) => Promise<R>,
  body: Exactly<A["json"]>,
): Promise<R> {
  // No `json` argument, so hono/client neither stringifies nor sets a content type: both come from here.
  return (endpoint as unknown as JsonEndpoint<R>)({ json: undefined as never } as never, {
    headers: { "content-type": "application/json" },
    init: { body: stringifyJson(body as JsonOutput) },
  });
}

/** An answer's JSON with integers above 2^53 as exact bigint (every other number stays a number). */
export type Exact<T> = T extends number
  ? number | bigint
  : T extends readonly (infer E)[]
    ? Exact<E>[]
    : T extends object
      ? { [K in keyof T]: Exact<T[K]> }
      : T;

/** Reads a JSON answer keeping 64-bit integers exact; `res.json()` would round ids above 2^53. */
export async function readExact<T>(res: ClientResponse<T>): Promise<Exact<T>> {
  return plain(parseJson(await res.text())) as Exact<T>;
}

function plain(value: JsonValue): unknown {
  if (value instanceof JsonFraction) return value.value;
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}
