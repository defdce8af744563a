/**
 * Response encoding by content negotiation: MessagePack when `Accept` names it, JSON otherwise.
 * Both carry 64-bit ids exactly (bigint → uint64 / exact integer literal).
 */
import { encode } from "@msgpack/msgpack";
import type { Context, TypedResponse } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../env";
import { type JsonOutput, stringifyJson } from "./json-write";
import type { WireValue } from "./wire-types";

const MSGPACK_TYPES = new Set(["application/msgpack", "application/x-msgpack"]);
const ENCODE_OPTIONS = { useBigInt64: true, ignoreUndefined: true } as const;

/** Whether the `Accept` header names a MessagePack type with a non-zero quality. */
export function acceptsMsgpack(accept: string | undefined): boolean {
  if (accept === undefined || !accept.includes("msgpack")) return false;
  for (const range of accept.split(",")) {
    const [type = "", ...params] = range.split(";");
    if (!MSGPACK_TYPES.has(type.trim().toLowerCase())) continue;
    const q = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith("q="));
    if (q === undefined || Number(q.slice(2)) > 0) return true;
  }
  return false;
}

/** A response whose JSON shape and status reach `hono/client` (the value's JSON form, see `WireValue`). */
export type Sent<T, S extends ContentfulStatusCode> = Response & TypedResponse<WireValue<T>, S, "json">;

export function send<T extends JsonOutput, S extends ContentfulStatusCode>(
  c: Context<AppEnv>,
  value: T,
  status: S,
  headers: Record<string, string> = {},
): Sent<T, S> {
  // Caches must key on Accept: the same URL answers in two encodings.
  let response: Response;
  if (acceptsMsgpack(c.req.header("accept"))) {
    response = c.body(encode(value, ENCODE_OPTIONS), status, {
      ...headers,
      "content-type": "application/msgpack",
      vary: "accept",
    });
  } else {
    response = c.body(stringifyJson(value), status, {
      ...headers,
      "content-type": "application/json",
      vary: "accept",
    });
  }
  return response as Sent<T, S>;
}

const OK = { status: "ok" } as const;
/** Encoded once: the answer to every successful write, on the hot path of `/add` and `/free`. */
const OK_JSON = stringifyJson(OK);
const OK_MSGPACK = encode(OK, ENCODE_OPTIONS);

/** `{"status":"ok"}`, Dynamo's answer to every successful write. */
export function sendOk<S extends 200 | 201>(c: Context<AppEnv>, status: S): Sent<typeof OK, S> {
  const response: Response = acceptsMsgpack(c.req.header("accept"))
    ? c.body(OK_MSGPACK.slice(), status, { "content-type": "application/msgpack", vary: "accept" })
    : c.body(OK_JSON, status, { "content-type": "application/json", vary: "accept" });
  return response as Sent<typeof OK, S>;
}
