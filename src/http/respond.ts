/**
 * Response encoding by content negotiation: MessagePack when `Accept` names it, JSON otherwise.
 * Both carry 64-bit ids exactly (bigint → uint64 / exact integer literal).
 */
import { encode } from "@msgpack/msgpack";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../env";
import { type JsonOutput, stringifyJson } from "./json-write";

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

export function send(
  c: Context<AppEnv>,
  value: JsonOutput,
  status: ContentfulStatusCode,
  headers: Record<string, string> = {},
): Response {
  // Caches must key on Accept: the same URL answers in two encodings.
  if (acceptsMsgpack(c.req.header("accept"))) {
    return c.body(encode(value, ENCODE_OPTIONS), status, {
      ...headers,
      "content-type": "application/msgpack",
      vary: "accept",
    });
  }
  return c.body(stringifyJson(value), status, {
    ...headers,
    "content-type": "application/json",
    vary: "accept",
  });
}

const OK = { status: "ok" } as const;

/** `{"status":"ok"}`, Dynamo's answer to every successful write. */
export function sendOk(c: Context<AppEnv>, status: 200 | 201): Response {
  return send(c, OK, status);
}
