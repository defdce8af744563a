/**
 * A small HTTP client for the reliability tests (caps, fuzzing, faults): raw requests into the
 * Worker's fetch handler with the real bindings, every call bounded by a timeout so a hang fails the
 * test instead of stalling it, bodies in JSON (bigints written exactly) or MessagePack.
 *
 * The handler is called directly rather than through `exports.default.fetch`: in
 * vitest-pool-workers 0.15.1 every call through `exports.default` re-imports the main module through
 * the runner object, and the cost grows with each call in a file (100 requests took 0.8 s at first
 * and 14 s after 1,100), which a fuzz test of thousands of requests cannot afford. The handler is the
 * same object (`src/index.ts` re-exports the app), talking to the same objects.
 */
import { encode } from "@msgpack/msgpack";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import app from "../../src/app";
import type { Env } from "../../src/env";

/** The Worker's fetch handler with the real bindings, called directly (see above). */
export const worker = {
  async fetch(request: Request): Promise<Response> {
    const ctx = createExecutionContext();
    const response = await app.fetch(request, env as unknown as Env, ctx);
    await waitOnExecutionContext(ctx);
    return response;
  },
};

export interface Answer {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  text: string;
}

/** A call that did not answer within its bound. */
export class Hang extends Error {
  override readonly name = "Hang";
}

/** Sends one request and reads its whole answer, failing with {@link Hang} after `timeoutMs`. */
export async function send(
  method: string,
  path: string,
  init: { body?: BodyInit | null; headers?: Record<string, string> } = {},
  timeoutMs = 10_000,
): Promise<Answer> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Hang(`${method} ${path} did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  const answer = (async () => {
    const res = await worker.fetch(new Request(`http://x${path}`, { method, ...init }));
    const bytes = new Uint8Array(await res.arrayBuffer());
    return { status: res.status, headers: res.headers, bytes, text: new TextDecoder().decode(bytes) };
  })();
  try {
    return await Promise.race([answer, hang]);
  } finally {
    clearTimeout(timer);
  }
}

type RawJson = (text: string) => unknown;
const rawJson = (JSON as unknown as { rawJSON: RawJson }).rawJSON;

/** JSON text with bigints as exact integer literals. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? rawJson(v.toString()) : v));
}

export function postJson(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return send("POST", path, {
    body: typeof body === "string" ? body : toJson(body),
    headers: { "content-type": "application/json", ...headers },
  });
}

export function postMsgpack(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return send("POST", path, {
    body: encode(body, { useBigInt64: true }),
    headers: { "content-type": "application/msgpack", ...headers },
  });
}

/** A listing (`/workers`, `/loads`) of one tracker, as the exact text the Worker answers. */
export async function listing(
  path: "/workers" | "/loads",
  model: string,
  headers: Record<string, string> = {},
) {
  const answer = await send(
    "GET",
    `${path}?${new URLSearchParams({ model_name: model, tenant_id: "default" })}`,
    {
      headers,
    },
  );
  if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}: ${answer.text}`);
  return answer.text;
}

/** The `error` string of an error answer; throws when the body is not `{"error": "<string>"}`. */
export function errorOf(answer: Answer): string {
  const body: unknown = JSON.parse(answer.text);
  const error = (body as { error?: unknown }).error;
  if (typeof error !== "string") throw new Error(`no error string in ${answer.status} ${answer.text}`);
  return error;
}
