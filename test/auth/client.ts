/**
 * Requests into the Worker as one of the `auth` project's callers (their tokens: vitest.config.ts).
 * The handler is called directly, as `test/workers/reliability-http.ts` explains: through
 * `exports.default` every call re-imports the main module and the cost grows with each call in a
 * file, which the auth matrix's thousands of calls cannot afford.
 */
import { env } from "cloudflare:workers";
import { worker } from "../workers/reliability-http";

type Named = "acme" | "acmeAdmin" | "globex" | "ops";
export type Caller = "none" | "bad" | Named;

/** Each configured token by its grant's name, read from the very secret the Worker sees. */
export const TOKENS = Object.fromEntries(
  Object.entries(
    JSON.parse((env as unknown as { API_TOKENS: string }).API_TOKENS) as Record<string, { name: Named }>,
  ).map(([token, grant]) => [grant.name, token]),
) as Record<Named, string>;

export const CALLERS: readonly Caller[] = ["none", "bad", "globex", "acme", "acmeAdmin", "ops"];

function authorization(caller: Caller): Record<string, string> {
  if (caller === "none") return {};
  if (caller === "bad") return { authorization: "Bearer tok-not-configured" };
  return { authorization: `Bearer ${TOKENS[caller]}` };
}

/** Calls the Worker as `caller`; a `body` other than bytes is sent as JSON. */
export function call(
  caller: Caller,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  const init: RequestInit = { method, headers: { ...authorization(caller), ...headers } };
  if (body instanceof Uint8Array) init.body = body;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { "content-type": "application/json", ...init.headers };
  }
  return worker.fetch(new Request(`http://x${path}`, init));
}

export function query(params: Record<string, string>): string {
  return `?${new URLSearchParams(params)}`;
}
