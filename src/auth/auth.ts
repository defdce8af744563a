/**
 * `src/auth/`: who may call what. The middleware and tenant checks (this file) and the
 * `API_TOKENS` secret they read (`api-tokens.ts`).
 *
 * Bearer-token authentication and tenant scope. `authenticate` runs before every route: it resolves
 * the `Authorization` header to a grant (401 without a valid one) and refuses admin routes to
 * non-admin tokens (403). Tenant scope is checked where a route learns its tenant, after parsing:
 * `trackerFor` (every route about one tracker) calls `authorize`, and listings keep only the
 * trackers `mayAccess` allows. With no `API_TOKENS` secret the API is open (local development).
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { HttpError } from "../http/errors";
import { send } from "../wire/respond";
import { ALL_TENANTS, type Grant, grants, parseApiTokens, TokenTable } from "./api-tokens";

/**
 * Answer without any token, whatever the secret: liveness probes carry no credentials, and a browser
 * opening the dashboard or the docs cannot send a header (the dashboard's script then sends the
 * operator's token with every API call). None of these carries tracker data.
 */
export const PUBLIC_PATHS: ReadonlySet<string> = new Set([
  "/health",
  "/",
  "/docs",
  "/openapi.json",
  "/selection/health",
]);

/**
 * Paths only `admin` tokens may call: the worker registry, replication status and the cache index's
 * dump. The selection
 * catalog's writes are admin-only too, by method (`adminOnly`): its reads are the tenants'.
 */
export const ADMIN_PATHS: ReadonlySet<string> = new Set([
  "/register",
  "/unregister",
  "/replica_sync/peers",
  "/selection/dump",
  "/selection/replica_sync/peers",
  "/selection/replica_sync/register_peer",
  "/selection/replica_sync/deregister_peer",
]);

const OPEN: Grant = { tenants: ALL_TENANTS, admin: true };
/** What a request has before `authenticate` ran: nothing. */
const NOBODY: Grant = { tenants: new Set(), admin: false };

const CHALLENGE = 'Bearer realm="slot-tracker"';

/** The parsed secret, per isolate, rebuilt only when the secret's text changes. */
let cached: { raw: string; table: Promise<TokenTable | { problem: string }> } | undefined;
let warnedOpen = false;

function tokenTable(raw: string): Promise<TokenTable | { problem: string }> {
  if (cached?.raw !== raw) {
    const config = parseApiTokens(raw);
    if (!config.ok) {
      // Once per isolate and secret value: every request answers 503 until an operator fixes it.
      console.error(JSON.stringify({ level: "error", msg: `server misconfigured: ${config.problem}` }));
    }
    cached = { raw, table: config.ok ? TokenTable.of(config.tokens) : Promise.resolve(config) };
  }
  return cached.table;
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive, RFC 6750). */
export function bearerOf(header: string | undefined): string | undefined {
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1];
}

export const authenticate: MiddlewareHandler<AppEnv> = async (c, next) => {
  const raw = c.env.API_TOKENS;
  if (PUBLIC_PATHS.has(c.req.path)) return next();
  if (raw === undefined) {
    if (!warnedOpen) {
      warnedOpen = true;
      console.warn(JSON.stringify({ level: "warn", msg: "API_TOKENS is not set: the API is open" }));
    }
    c.set("principal", OPEN);
    return next();
  }
  const table = await tokenTable(raw);
  // An operator's mistake, not the client's: fail closed, and say so.
  if (!(table instanceof TokenTable))
    return send(c, { error: `server misconfigured: ${table.problem}` }, 503);
  const token = bearerOf(c.req.header("authorization"));
  if (token === undefined) {
    return send(c, { error: "missing bearer token" }, 401, { "www-authenticate": CHALLENGE });
  }
  const grant = await table.lookup(token);
  if (grant === undefined) {
    return send(c, { error: "invalid bearer token" }, 401, {
      "www-authenticate": `${CHALLENGE}, error="invalid_token"`,
    });
  }
  c.set("principal", grant);
  if (ADMIN_PATHS.has(c.req.path) && !grant.admin) {
    return send(c, { error: `${c.req.path} requires an admin token` }, 403);
  }
  return next();
};

/** Refuses (403) a caller without an `admin` token, as `authenticate` refuses one on `ADMIN_PATHS`. */
export const adminOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!(c.get("principal") ?? NOBODY).admin) {
    return send(c, { error: `${c.req.path} requires an admin token` }, 403);
  }
  return next();
};

/** Whether the caller's token covers `tenant`. */
export function mayAccess(c: Context<AppEnv>, tenant: string): boolean {
  return grants(c.get("principal") ?? NOBODY, tenant);
}

/** Refuses (403) a request naming a tenant outside its token's scope. */
export function authorize(c: Context<AppEnv>, tenant: string): void {
  if (!mayAccess(c, tenant)) {
    throw new HttpError(403, `this token may not access tenant ${JSON.stringify(tenant)}`);
  }
}
