/**
 * MessagePack calls for the API tests: a body POSTed as MessagePack, an answer that must be
 * MessagePack decoded, and the listings asked for in MessagePack.
 */
import { decode, encode } from "@msgpack/msgpack";
import { expect } from "vitest";
import { call, get } from "./api-http";

export const MSGPACK = "application/msgpack";
/** As the Worker must: int64/uint64 are bigint, so nothing above 2^53 is rounded on either side. */
export const OPTIONS = { useBigInt64: true } as const;

type MsgpackType = "application/msgpack" | "application/x-msgpack";

/** POSTs `body` as MessagePack; `accept: null` sends no Accept header. */
export function send(
  path: string,
  body: unknown,
  options: { type?: MsgpackType; accept?: string | null } = {},
): Promise<Response> {
  const { type = MSGPACK, accept = MSGPACK } = options;
  const headers: Record<string, string> = { "content-type": type };
  if (accept !== null) headers.accept = accept;
  return call("POST", path, { body: encode(body, OPTIONS), headers });
}

/** Status and decoded MessagePack body of an answer that must be MessagePack. */
export async function unpack(res: Response | Promise<Response>): Promise<{ status: number; body: unknown }> {
  const response = await res;
  const bytes = new Uint8Array(await response.arrayBuffer());
  expect(response.headers.get("content-type")).toBe(MSGPACK);
  return { status: response.status, body: decode(bytes, OPTIONS) };
}

export const OK = { status: "ok" };

/** A listing asked for as MessagePack (or as `accept` says), decoded. */
export function listing(path: "/workers" | "/loads", query: Record<string, string>, accept = MSGPACK) {
  return unpack(get(path, query, { accept }));
}
