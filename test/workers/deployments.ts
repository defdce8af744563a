/**
 * One Worker, configured two ways: the Worker's fetch handler called with the real bindings (the real
 * tracker and directory objects), and with vars of a test's choosing on top. A var is read per
 * request, so `PARTITION_FIELD=routing_group` needs no second workerd: both deployments talk to the
 * same objects, which is what a redeploy with another var does too.
 */

import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { encode } from "@msgpack/msgpack";
import app from "../../src/app";
import type { Env } from "../../src/env";
import { toJson } from "./api-http";

export interface Deployment {
  fetch(request: Request): Promise<Response>;
  post(path: string, body: unknown): Promise<Response>;
  /** POSTs `body` as MessagePack (64-bit integers as int64/uint64). */
  postMsgpack(path: string, body: unknown): Promise<Response>;
  get(path: string, query?: Record<string, string>, headers?: Record<string, string>): Promise<Response>;
}

export function deployment(vars: Partial<Record<keyof Env, string>> = {}): Deployment {
  const bindings = { ...(env as unknown as Env), ...vars } as Env;
  const fetch = async (request: Request): Promise<Response> => {
    const ctx = createExecutionContext();
    const response = await app.fetch(request, bindings, ctx);
    await waitOnExecutionContext(ctx);
    return response;
  };
  const send = (method: string, path: string, body: BodyInit | undefined, headers: Record<string, string>) =>
    fetch(new Request(`http://x${path}`, { method, body: body ?? null, headers }));
  return {
    fetch,
    post: (path, body) =>
      send("POST", path, typeof body === "string" ? body : toJson(body), {
        "content-type": "application/json",
      }),
    postMsgpack: (path, body) =>
      send("POST", path, encode(body, { useBigInt64: true }), { "content-type": "application/msgpack" }),
    get: (path, query = {}, headers = {}) => {
      const search = new URLSearchParams(query).toString();
      return send("GET", search === "" ? path : `${path}?${search}`, undefined, headers);
    },
  };
}

/** The configuration of `wrangler.toml` (`PARTITION_FIELD = "tenant_id"`). */
export const firstGeneration = deployment();
/** The same Worker deployed with `PARTITION_FIELD = "routing_group"`. */
export const secondGeneration = deployment({ PARTITION_FIELD: "routing_group" });
