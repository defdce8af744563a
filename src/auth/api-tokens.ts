/**
 * The `API_TOKENS` secret: a JSON object mapping each bearer token to its grant,
 *
 *   {"tok-acme":  {"tenants": ["acme"], "name": "acme frontends"},
 *    "tok-ops":   {"tenants": ["*"], "admin": true, "name": "operators"}}
 *
 * - `tenants` (required, non-empty): the tenants the token may read and write; `"*"` means all.
 * - `admin` (default false): may also call the registry and replication routes (`ADMIN_PATHS`),
 *   for its tenants.
 * - `name` (optional, ≤ 64 characters): printed in the access log instead of the token.
 *
 * Unknown fields are refused, so a typo (`"admins": true`) fails closed instead of granting less or
 * more than meant. Problems name the entry by position, never by its token.
 */
import { MAX_NAME_BYTES } from "../../durable-objects/limits";

export const ALL_TENANTS = "*";

export interface Grant {
  /** The tenants the token may touch, or every tenant. */
  tenants: ReadonlySet<string> | typeof ALL_TENANTS;
  admin: boolean;
  /** How the access log names the caller. */
  name?: string;
}

export type TokenConfig =
  | { ok: true; tokens: [token: string, grant: Grant][] }
  | { ok: false; problem: string };

const GRANT_FIELDS = new Set(["tenants", "admin", "name"]);
const MAX_CLIENT_NAME = 64;
const UTF8 = new TextEncoder();

/** Reads the secret; `problem` says what is wrong (for the operator) without quoting any token. */
export function parseApiTokens(raw: string): TokenConfig {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { ok: false, problem: "API_TOKENS is not valid JSON" };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return { ok: false, problem: "API_TOKENS must be a JSON object mapping each token to its grant" };
  }
  const tokens: [string, Grant][] = [];
  for (const [token, value] of Object.entries(parsed)) {
    const where = `API_TOKENS entry ${tokens.length + 1}`;
    if (token === "" || /\s/.test(token)) {
      return { ok: false, problem: `${where}: a token must be non-empty and contain no whitespace` };
    }
    const grant = grantOf(value);
    if (typeof grant === "string") return { ok: false, problem: `${where}: ${grant}` };
    tokens.push([token, grant]);
  }
  return { ok: true, tokens };
}

/** The grant in `value`, or what is wrong with it. */
function grantOf(value: unknown): Grant | string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return 'expected an object like {"tenants": ["acme"]}';
  }
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).find((field) => !GRANT_FIELDS.has(field));
  if (unknown !== undefined) return `unknown field ${JSON.stringify(unknown)} (known: tenants, admin, name)`;
  const { tenants, admin = false, name } = fields;
  if (
    !Array.isArray(tenants) ||
    tenants.length === 0 ||
    !tenants.every((t) => typeof t === "string" && t !== "" && UTF8.encode(t).length <= MAX_NAME_BYTES)
  ) {
    return `"tenants" must be a non-empty array of tenant names (or ["*"] for every tenant)`;
  }
  if (typeof admin !== "boolean") return `"admin" must be true or false`;
  if (name !== undefined && (typeof name !== "string" || name.length > MAX_CLIENT_NAME)) {
    return `"name" must be a string of at most ${MAX_CLIENT_NAME} characters`;
  }
  const all = tenants.includes(ALL_TENANTS);
  return {
    tenants: all ? ALL_TENANTS : new Set(tenants as string[]),
    admin,
    ...(name !== undefined && { name }),
  };
}

/** Whether `grant` covers `tenant`. */
export function grants(grant: Grant, tenant: string): boolean {
  return grant.tenants === ALL_TENANTS || grant.tenants.has(tenant);
}

export async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", UTF8.encode(text)));
}

/**
 * Equality in time that depends only on the lengths: every byte pair is compared, no early exit.
 * Callers compare SHA-256 digests, so the lengths are fixed and leak nothing either.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/**
 * The configured tokens, kept as SHA-256 digests. A lookup hashes the presented token and compares
 * it with every digest, whichever matches, so neither the match nor its position shows in the time.
 */
export class TokenTable {
  private constructor(private readonly entries: readonly [digest: Uint8Array, grant: Grant][]) {}

  static async of(tokens: readonly [string, Grant][]): Promise<TokenTable> {
    return new TokenTable(await Promise.all(tokens.map(async ([t, g]) => [await sha256(t), g] as const)));
  }

  async lookup(presented: string): Promise<Grant | undefined> {
    const digest = await sha256(presented);
    let found: Grant | undefined;
    for (const [candidate, grant] of this.entries) {
      if (constantTimeEqual(digest, candidate)) found = grant;
    }
    return found;
  }
}
