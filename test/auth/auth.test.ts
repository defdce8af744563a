import { encode } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";
import app from "../../src/app";
import { CALLERS, type Caller, call, query, TOKENS } from "./client";

const TENANT = "acme";

interface RouteCase {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  admin: boolean;
  /** The call for `model` of tenant acme, after `setUp` (worker 1 with two ranks, request r1 live). */
  request: (model: string) => { path: string; body?: unknown; headers?: Record<string, string> };
  /** Status for a caller allowed to make it. */
  ok: number;
  /**
   * What a caller whose token does not cover the tenant gets, when not the 403: a route that names
   * only a reservation id cannot tell it is out of scope, and finds no reservation the token may see.
   */
  outOfScope?: { status: number; error?: string };
}

const scope = (model: string) => ({ model_name: model, tenant_id: TENANT });
const partition = (model: string) => ({ model_name: model, routing_group: TENANT });
/** Worker 1 of `setUp` as the catalog's record: two ranks, block size 16. */
const catalogRecord = (model: string) => ({
  ...partition(model),
  worker_id: 1,
  endpoint: "http://w1",
  block_size: 16,
  data_parallel_size: 2,
});
const R1_MISSING = { status: 404, error: "reservation r1 not found" };
/** One engine batch (vLLM's array form) storing one 16-token block, for worker 1's rank 0. */
const KV_BATCH = encode([
  1_757_500_000.25,
  [["BlockStored", [101], null, Array.from({ length: 16 }, (_, i) => i), 16, null, "GPU", null]],
  0,
]);
const kvCall = (path: string, naming: Record<string, string>) => ({
  path: `${path}${query({ ...naming, worker_id: "1" })}`,
  body: KV_BATCH,
  headers: { "content-type": "application/msgpack", "x-kv-event-seq": "0", "x-kv-event-epoch": "auth" },
});

const ROUTES: RouteCase[] = [
  {
    method: "POST",
    path: "/register",
    admin: true,
    ok: 201,
    request: (m) => ({
      path: "/register",
      body: { ...scope(m), worker_id: 2, block_size: 16, dp_start: 0, dp_size: 1 },
    }),
  },
  {
    method: "POST",
    path: "/unregister",
    admin: true,
    ok: 200,
    request: (m) => ({ path: "/unregister", body: { ...scope(m), worker_id: 1 } }),
  },
  {
    method: "GET",
    path: "/workers",
    admin: false,
    ok: 200,
    request: (m) => ({ path: `/workers${query(scope(m))}` }),
  },
  {
    method: "POST",
    path: "/add",
    admin: false,
    ok: 201,
    request: (m) => ({
      path: "/add",
      body: {
        ...scope(m),
        request_id: "r2",
        worker_id: 1,
        dp_rank: 1,
        sequence_hashes: [7, 8],
        new_isl_tokens: 5,
      },
    }),
  },
  {
    method: "POST",
    path: "/prefill_complete",
    admin: false,
    ok: 200,
    request: (m) => ({ path: "/prefill_complete", body: { ...scope(m), request_id: "r1" } }),
  },
  {
    method: "POST",
    path: "/free",
    admin: false,
    ok: 200,
    request: (m) => ({ path: "/free", body: { ...scope(m), request_id: "r1" } }),
  },
  {
    method: "POST",
    path: "/batch",
    admin: false,
    ok: 200,
    request: (m) => ({ path: "/batch", body: { ...scope(m), ops: [{ op: "free", request_id: "r1" }] } }),
  },
  {
    method: "GET",
    path: "/loads",
    admin: false,
    ok: 200,
    request: (m) => ({ path: `/loads${query(scope(m))}` }),
  },
  {
    method: "POST",
    path: "/potential_loads",
    admin: false,
    ok: 200,
    request: (m) => ({ path: "/potential_loads", body: { ...scope(m), sequence_hashes: [1, 2, 3] } }),
  },
  {
    method: "POST",
    path: "/route",
    admin: false,
    ok: 201,
    request: (m) => ({ path: "/route", body: { ...scope(m), request_id: "r3", sequence_hashes: [1, 2] } }),
  },
  {
    method: "POST",
    path: "/leases",
    admin: false,
    ok: 200,
    request: (m) => ({ path: "/leases", body: { ...scope(m), owner: "fe", ttl_ms: 60_000 } }),
  },
  {
    method: "DELETE",
    path: "/leases/:owner",
    admin: false,
    // `setUp` makes no lease: a caller allowed in reaches the tracker, which has none to end.
    ok: 404,
    request: (m) => ({ path: `/leases/fe${query(scope(m))}` }),
  },
  {
    method: "GET",
    path: "/leases",
    admin: false,
    ok: 200,
    request: (m) => ({ path: `/leases${query(scope(m))}` }),
  },
  {
    method: "POST",
    path: "/kv_events",
    admin: false,
    ok: 200,
    request: (m) => kvCall("/kv_events", scope(m)),
  },
  {
    method: "GET",
    path: "/kv_events",
    admin: false,
    ok: 200,
    request: (m) => ({ path: `/kv_events${query(scope(m))}` }),
  },
  {
    method: "POST",
    path: "/selection/kv_events",
    admin: false,
    ok: 200,
    request: (m) => kvCall("/selection/kv_events", partition(m)),
  },
  {
    method: "GET",
    path: "/selection/kv_events",
    admin: false,
    ok: 200,
    request: (m) => ({ path: `/selection/kv_events${query(partition(m))}` }),
  },
  {
    method: "POST",
    path: "/selection/leases",
    admin: false,
    ok: 200,
    request: (m) => ({ path: "/selection/leases", body: { ...partition(m), owner: "fe", ttl_ms: 60_000 } }),
  },
  {
    method: "DELETE",
    path: "/selection/leases/:owner",
    admin: false,
    ok: 404,
    request: (m) => ({ path: `/selection/leases/fe${query(partition(m))}` }),
  },
  {
    method: "GET",
    path: "/selection/leases",
    admin: false,
    ok: 200,
    request: (m) => ({ path: `/selection/leases${query(partition(m))}` }),
  },
  {
    method: "GET",
    path: "/replica_sync/peers",
    admin: true,
    ok: 200,
    request: (m) => ({ path: `/replica_sync/peers${query(scope(m))}` }),
  },
  {
    method: "GET",
    path: "/metrics",
    admin: false,
    ok: 200,
    request: (m) => ({ path: `/metrics${query(scope(m))}` }),
  },
  {
    method: "POST",
    path: "/selection/select",
    admin: false,
    ok: 200,
    request: (m) => ({ path: "/selection/select", body: { ...partition(m), token_ids: [1, 2, 3, 4] } }),
  },
  {
    method: "POST",
    path: "/selection/select_and_reserve",
    admin: false,
    ok: 200,
    request: (m) => ({
      path: "/selection/select_and_reserve",
      body: { ...partition(m), selection_id: "s2", token_ids: [1, 2, 3, 4] },
    }),
  },
  {
    method: "POST",
    path: "/selection/reservations",
    admin: false,
    ok: 201,
    request: (m) => ({
      path: "/selection/reservations",
      body: {
        ...partition(m),
        selection_id: "x2",
        worker_id: 1,
        dp_rank: 1,
        sequence_hashes: [7],
        isl_tokens: 4,
      },
    }),
  },
  {
    method: "POST",
    path: "/selection/reservations/:reservation_id/prefill_complete",
    admin: false,
    ok: 200,
    outOfScope: R1_MISSING,
    request: () => ({ path: "/selection/reservations/r1/prefill_complete" }),
  },
  {
    method: "POST",
    path: "/selection/reservations/:reservation_id/output_block",
    admin: false,
    ok: 200,
    outOfScope: R1_MISSING,
    request: () => ({ path: "/selection/reservations/r1/output_block", body: {} }),
  },
  {
    method: "DELETE",
    path: "/selection/reservations/:reservation_id",
    admin: false,
    ok: 200,
    outOfScope: R1_MISSING,
    request: () => ({ path: "/selection/reservations/r1" }),
  },
  {
    method: "GET",
    path: "/selection/loads",
    admin: false,
    ok: 200,
    request: (m) => ({ path: `/selection/loads${query(partition(m))}` }),
  },
  {
    method: "POST",
    path: "/selection/potential_loads",
    admin: false,
    ok: 200,
    request: (m) => ({
      path: "/selection/potential_loads",
      body: { ...partition(m), token_ids: [1, 2, 3, 4] },
    }),
  },
  {
    method: "POST",
    path: "/selection/overlap_scores",
    admin: false,
    ok: 200,
    request: (m) => ({
      path: "/selection/overlap_scores",
      body: { ...partition(m), token_ids: [1, 2, 3, 4] },
    }),
  },
  {
    method: "GET",
    path: "/selection/dump",
    admin: true,
    ok: 200,
    request: () => ({ path: "/selection/dump" }),
  },
  // The worker catalog: writes by admin tokens covering the group, reads by the group's tokens.
  {
    method: "POST",
    path: "/selection/workers",
    admin: true,
    ok: 201,
    request: (m) => ({ path: "/selection/workers", body: { ...catalogRecord(m), endpoint: "http://w1b" } }),
  },
  {
    method: "GET",
    path: "/selection/workers",
    admin: false,
    ok: 200,
    request: (m) => ({ path: `/selection/workers${query(partition(m))}` }),
  },
  {
    method: "PATCH",
    path: "/selection/workers/:worker_id",
    admin: true,
    ok: 200,
    request: () => ({ path: "/selection/workers/1", body: { endpoint: "http://w1b" } }),
  },
  {
    method: "DELETE",
    path: "/selection/workers/:worker_id",
    admin: true,
    ok: 200,
    request: () => ({ path: "/selection/workers/1" }),
  },
  {
    method: "GET",
    path: "/selection/ready",
    admin: false,
    ok: 200,
    request: () => ({ path: "/selection/ready" }),
    // Readiness over the groups the token covers: none of globex's is schedulable.
    outOfScope: { status: 503 },
  },
  {
    method: "GET",
    path: "/selection/replica_sync/peers",
    admin: true,
    ok: 200,
    request: () => ({ path: "/selection/replica_sync/peers" }),
  },
  {
    method: "POST",
    path: "/selection/replica_sync/register_peer",
    admin: true,
    ok: 409,
    request: () => ({ path: "/selection/replica_sync/register_peer", body: { endpoint: "tcp://peer:5000" } }),
  },
  {
    method: "POST",
    path: "/selection/replica_sync/deregister_peer",
    admin: true,
    ok: 409,
    request: () => ({
      path: "/selection/replica_sync/deregister_peer",
      body: { endpoint: "tcp://peer:5000" },
    }),
  },
];

/**
 * Pages without tracker data (the dashboard shell, the API's description), open to browsers that
 * cannot send a header; the dashboard's own API calls carry the token.
 */
const DOCUMENTS = ["/", "/docs", "/openapi.json"];

/** What `caller` must get from `route`; the error text too where the status is a refusal. */
function expected(route: RouteCase, caller: Caller, path: string): { status: number; error?: string } {
  // The refusal names the path as called (`/selection/workers/1`), not the route's pattern.
  const adminOnly = { status: 403, error: `${path.split("?")[0]} requires an admin token` };
  switch (caller) {
    case "none":
      return { status: 401, error: "missing bearer token" };
    case "bad":
      return { status: 401, error: "invalid bearer token" };
    case "globex":
      return route.admin
        ? adminOnly
        : (route.outOfScope ?? { status: 403, error: `this token may not access tenant "acme"` });
    case "acme":
      return route.admin ? adminOnly : { status: route.ok };
    case "acmeAdmin":
    case "ops":
      return { status: route.ok };
  }
}

/** A fresh tracker of tenant acme: worker 1 with ranks 0 and 1, request r1 live on rank 0. */
async function setUp(): Promise<string> {
  const model = `auth-${crypto.randomUUID()}`;
  const registered = await call("ops", "POST", "/register", {
    ...scope(model),
    worker_id: 1,
    block_size: 16,
    dp_start: 0,
    dp_size: 2,
  });
  expect(registered.status).toBe(201);
  const added = await call("ops", "POST", "/add", {
    ...scope(model),
    request_id: "r1",
    worker_id: 1,
    dp_rank: 0,
    sequence_hashes: [1, 2],
    new_isl_tokens: 10,
  });
  expect(added.status).toBe(201);
  // The catalog gives the worker an endpoint: it is schedulable for the selection API too.
  const scheduled = await call("ops", "POST", "/selection/workers", catalogRecord(model));
  expect(scheduled.status).toBe(201);
  return model;
}

/** Everything a refused call could have changed, as the operators' token reads it. */
async function stateOf(model: string): Promise<string> {
  const workers = await (await call("ops", "GET", `/workers${query(scope(model))}`)).text();
  const loads = await (await call("ops", "GET", `/loads${query(scope(model))}`)).text();
  return `${workers}\n${loads}`;
}

describe("the auth matrix: every route for every caller", () => {
  it.each(ROUTES)(
    "$method $path: 401 without a valid token, 403 out of scope, served in scope",
    async (route) => {
      for (const caller of CALLERS) {
        const model = await setUp();
        const before = await stateOf(model);
        const { path, body, headers } = route.request(model);
        const res = await call(caller, route.method, path, body, headers);
        const want = expected(route, caller, path);
        const text = await res.text();
        expect({ caller, status: res.status }, text).toEqual({ caller, status: want.status });
        if (want.error !== undefined) {
          expect(JSON.parse(text)).toEqual({ error: want.error });
          // A refused call changes nothing.
          expect(await stateOf(model)).toBe(before);
        }
        if (want.status === 401) expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm=/);
      }
    },
  );

  it("GET /health answers every caller, with or without a token", async () => {
    for (const caller of CALLERS) expect((await call(caller, "GET", "/health")).status).toBe(200);
  });

  it("covers every route the app serves", () => {
    const covered = new Set(["/health", "/selection/health", ...ROUTES.map((r) => r.path), ...DOCUMENTS]);
    const served = app.routes.filter((r) => r.method !== "ALL").map((r) => r.path);
    expect(served.filter((path) => !covered.has(path))).toEqual([]);
  });

  it("serves the pages without tracker data to every caller, like /health", async () => {
    const served = new Set(app.routes.map((r) => r.path));
    for (const path of DOCUMENTS.filter((p) => served.has(p))) {
      for (const caller of CALLERS)
        expect({ path, caller, status: (await call(caller, "GET", path)).status }).toEqual({
          path,
          caller,
          status: 200,
        });
    }
  });
});

describe("bearer tokens", () => {
  it("takes the scheme in any case and ignores surrounding spaces", async () => {
    const res = await call("none", "GET", "/workers", undefined, {
      authorization: `  bEaReR ${TOKENS.acme}  `,
    });
    expect(res.status).toBe(200);
  });

  it("answers a Basic or empty Authorization header as a missing bearer token", async () => {
    for (const header of ["Basic dG9rOnRvaw==", "Bearer", "", TOKENS.acme]) {
      const res = await call("none", "GET", "/workers", undefined, { authorization: header });
      expect([res.status, await res.json()]).toEqual([401, { error: "missing bearer token" }]);
    }
  });

  it("refuses a token that is a prefix, an extension or a case variant of a real one", async () => {
    const acme = TOKENS.acme;
    for (const token of [acme.slice(0, -1), `${acme}0`, acme.toUpperCase()]) {
      const res = await call("none", "GET", "/workers", undefined, { authorization: `Bearer ${token}` });
      expect([res.status, await res.json()]).toEqual([401, { error: "invalid bearer token" }]);
    }
  });

  it("checks the tenant given as routing_group, and in a MessagePack body, like tenant_id", async () => {
    const model = await setUp();
    const aliased = await call("globex", "POST", "/free", {
      model_name: model,
      routing_group: TENANT,
      request_id: "r1",
    });
    expect([aliased.status, await aliased.json()]).toEqual([
      403,
      { error: 'this token may not access tenant "acme"' },
    ]);
    const packed = encode({ model_name: model, tenant_id: TENANT, request_id: "r1" });
    const msgpack = await call("globex", "POST", "/free", packed, { "content-type": "application/msgpack" });
    expect(msgpack.status).toBe(403);
    expect(await stateOf(model)).toContain('"active_prefill_tokens":10');
  });

  it("the default tenant is a tenant like any other: outside a token's scope unless granted", async () => {
    const res = await call("acme", "POST", "/potential_loads", { model_name: "m", sequence_hashes: [] });
    expect([res.status, await res.json()]).toEqual([
      403,
      { error: 'this token may not access tenant "default"' },
    ]);
  });
});

describe("peer replication", () => {
  it("is internal RPC: no HTTP route reaches the objects' replicate method", async () => {
    expect(
      app.routes.filter((r) => /replicat(e|ion)\b/.test(r.path) && r.path !== "/replica_sync/peers"),
    ).toEqual([]);
    for (const path of [
      "/replicate",
      "/replica_sync/replicate",
      "/replica_sync",
      "/replica_sync/peers/replicate",
    ]) {
      expect((await call("ops", "POST", path, {})).status).toBe(404);
    }
  });
});
