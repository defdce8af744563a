/**
 * The fuzz suite's operations (`fuzz.test.ts`): valid operations and the hostile requests mixed into
 * them — valid bodies broken by one mutation, stray paths and methods, odd query strings, random
 * bytes and JSON — and the routes the app answers, to tell a 405 from a 404.
 */
import fc from "fast-check";
import {
  type BodyOp,
  bodyOp,
  POST_ROUTES,
  type Encoding,
  mutationOf,
  type Mutation,
  OWNERS,
  type ValidOp,
  validOp,
} from "./fuzz-ops";
import { validFields } from "./fuzz-wire";
import app from "../../src/app";

export type Op =
  | { kind: "valid"; op: ValidOp; accept: Encoding }
  | { kind: "hostile"; base: BodyOp; mutation: Mutation; accept: Encoding }
  | { kind: "stray"; method: string; path: string }
  | { kind: "query"; path: string; params: [string, string][] }
  | { kind: "garbage"; path: string; type: string; bytes: Uint8Array }
  | { kind: "bad_end"; owner: string; query: BadEndQuery };

const accept = fc.constantFrom<Encoding>("json", "json", "msgpack");

/** Paths and the methods each answers, as the app routes them. */
export const ROUTES = new Map<string, Set<string>>();
for (const { path, method } of app.routes) {
  if (method === "ALL") continue;
  const methods = ROUTES.get(path) ?? new Set();
  methods.add(method);
  ROUTES.set(path, methods);
}

export const stray = fc
  .record({
    kind: fc.constant("stray" as const),
    method: fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"),
    path: fc.oneof(
      fc.constantFrom(
        ...ROUTES.keys(),
        "/workers/",
        "/ADD",
        "/add/x",
        "//add",
        "/%ff",
        "/add%00",
        "/batch/../add",
      ),
      fc.stringMatching(/^\/[a-z_.%0-9/-]{0,24}$/),
    ),
  })
  .filter(({ method, path }) => !ROUTES.get(normalized(path))?.has(method));

const query = fc.record({
  kind: fc.constant("query" as const),
  path: fc.constantFrom("/workers", "/loads", "/replica_sync/peers"),
  params: fc.array(
    fc.tuple(
      fc.constantFrom("model_name", "tenant_id", "routing_group", "x"),
      fc.oneof(fc.string({ maxLength: 8 }), fc.string({ unit: "grapheme", minLength: 250, maxLength: 300 })),
    ),
    { maxLength: 3 },
  ),
});

const utf8 = new TextEncoder();
export const garbage = fc.record({
  kind: fc.constant("garbage" as const),
  path: fc.constantFrom(...POST_ROUTES),
  type: fc.constantFrom("application/json", "application/msgpack", "application/x-msgpack"),
  bytes: fc.oneof(
    fc.uint8Array({ maxLength: 300 }),
    fc.jsonValue({ maxDepth: 4 }).map((v) => utf8.encode(JSON.stringify(v) ?? "")),
    fc.string({ maxLength: 100 }).map((s) => utf8.encode(s)),
  ),
});

/** What makes a `DELETE /leases/{owner}` unacceptable: its owner, or its query. */
export type BadEndQuery = "owner" | "no_model" | "empty_model" | "long_model" | "empty_tenant" | "disagree";

/**
 * `DELETE /leases/{owner}` made unacceptable by its owner (empty once decoded, past 256 bytes, or
 * an owner that holds no lease) or, for an owner that may hold one, by its query (no model, an
 * empty or too long one, an empty or disagreeing tenant). Each must be a 4xx that changes nothing.
 */
export const badEnd = fc.oneof(
  fc.record({
    kind: fc.constant("bad_end" as const),
    owner: fc.constantFrom("o".repeat(257), "%C3%A9".repeat(129), "%ff%fe", "%", "nobody"),
    query: fc.constant<BadEndQuery>("owner"),
  }),
  fc.record({
    kind: fc.constant("bad_end" as const),
    owner: fc.constantFrom(...OWNERS).map(encodeURIComponent),
    query: fc.constantFrom<BadEndQuery>("no_model", "empty_model", "long_model", "empty_tenant", "disagree"),
  }),
);

export const hostile = bodyOp.chain((base) =>
  fc.record({
    kind: fc.constant("hostile" as const),
    base: fc.constant(base),
    mutation: mutationOf(validFields(base, "m").path),
    accept,
  }),
);

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("valid" as const), op: validOp, accept }) },
  { weight: 6, arbitrary: hostile },
  { weight: 1, arbitrary: stray },
  { weight: 1, arbitrary: query },
  { weight: 1, arbitrary: garbage },
  { weight: 1, arbitrary: badEnd },
);

export function normalized(path: string): string {
  return new URL(`http://x${path}`).pathname;
}
