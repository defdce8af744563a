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

/** Any hono/client endpoint, its own argument type set aside: {@link callExact} writes the body itself. */
export type AnyEndpoint<R> = (args: never, options?: ClientRequestOptions) => Promise<R>;

/**
 * Calls `endpoint` with `args` (path parameters, query) and `body` written exactly. No `json`
 * argument reaches hono/client, so it neither stringifies nor sets a content type: both come from here.
 */
export function callExact<R>(endpoint: AnyEndpoint<R>, args: object, body: unknown): Promise<R> {
  const call = endpoint as unknown as (args: object, options: ClientRequestOptions) => Promise<R>;
  return call(
    { ...args, json: undefined },
    {
      headers: { "content-type": "application/json" },
      init: { body: stringifyJson(body as JsonOutput) },
    },
  );
}

/**
 * Calls a typed POST endpoint with `body` written exactly: bigint fields become exact JSON integers
 * (`client.register.$post` would throw on them). `postExact(client.register.$post, { worker_id: 2n ** 64n - 59n, … })`.
 */
export function postExact<A extends { json: unknown }, R>(
  endpoint: (args: A, options?: ClientRequestOptions) => Promise<R>,
  body: Exactly<A["json"]>,
): Promise<R> {
  return callExact(endpoint, {}, body);
}

/** As {@link postExact}, for endpoints with path parameters or a query too: `sendExact(e, { param }, body)`. */
export function sendExact<A extends { json: unknown }, R>(
  endpoint: (args: A, options?: ClientRequestOptions) => Promise<R>,
  args: Omit<A, "json">,
  body: Exactly<A["json"]>,
): Promise<R> {
  return callExact(endpoint, args, body);
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
  return exactJson(await res.text()) as Exact<T>;
}

/** JSON text as values, integers above 2^53 as exact bigint. */
export function exactJson(text: string): unknown {
  return plain(parseJson(text));
}

function plain(value: JsonValue): unknown {
  if (value instanceof JsonFraction) return value.value;
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}
