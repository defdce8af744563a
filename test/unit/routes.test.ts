import { afterEach, describe, expect, it, vi } from "vitest";
import { trackerName } from "../../durable-objects/naming";
import type { AddInput, DirectoryRpc, RegisterInput, Result, TrackerRpc } from "../../durable-objects/types";
import app from "../../src/app";
import type { Env } from "../../src/env";

type Call = { object: string; hint: string | undefined; method: string; args: unknown[] };

/** Namespaces whose stubs record every call and answer from the given handlers. */
function fakeEnv(tracker: Partial<TrackerRpc>, directory: Partial<DirectoryRpc> = {}, replicas = "primary") {
  const calls: Call[] = [];
  const namespace = (impl: object) => ({
    getByName: (object: string, options?: { locationHint?: string }) =>
      new Proxy(
        {},
        {
          get: (_target, method: string) => {
            const fn = (impl as Record<string, ((...args: unknown[]) => unknown) | undefined>)[method];
            if (fn === undefined) return undefined;
            return async (...args: unknown[]) => {
              calls.push({ object, hint: options?.locationHint, method, args });
              return fn(...args);
            };
          },
        },
      ),
  });
  const env = {
    TRACKER: namespace(tracker),
    DIRECTORY: namespace(directory),
    REPLICAS: replicas,
    REQUEST_EXPIRY_SECONDS: "300",
  } as unknown as Env;
  return { env, calls };
}

const OK: Result = { ok: true };
const json = (body: unknown) => ({
  method: "POST",
  body: typeof body === "string" ? body : JSON.stringify(body),
  headers: { "content-type": "application/json" },
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("writes", () => {
  it("POST /register answers 201 ok and calls the (replica, model, tenant) tracker with exact ids", async () => {
    const { env, calls } = fakeEnv({ register: async () => OK });
    const res = await app.request(
      "/register",
      json('{"worker_id":18446744073709551615,"model_name":"m","block_size":16,"dp_start":0,"dp_size":2}'),
      env,
    );
    expect(res.status).toBe(201);
    expect(await res.text()).toBe('{"status":"ok"}');
    const input: RegisterInput = { workerId: 18446744073709551615n, blockSize: 16, dpStart: 0, dpSize: 2 };
    expect(calls).toEqual([
      {
        object: trackerName({ replica: "primary", model: "m", tenant: "default" }),
        hint: undefined,
        method: "register",
        args: [input],
      },
    ]);
  });

  it("passes the tracker's failure message through with its mapped status", async () => {
    const message = "worker 1 already registered for model=m tenant=default";
    const { env } = fakeEnv({ register: async () => ({ ok: false, code: "duplicate_worker", message }) });
    const res = await app.request(
      "/register",
      json({ worker_id: 1, model_name: "m", block_size: 1, dp_start: 0, dp_size: 1 }),
      env,
    );
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ error: message });
  });

  it("POST /add passes hashes as one BigUint64Array and answers 201", async () => {
    const { env, calls } = fakeEnv({ add: async () => OK });
    const res = await app.request(
      "/add",
      json(
        '{"model_name":"m","routing_group":"g","request_id":"r","worker_id":7,"dp_rank":1,"sequence_hashes":[-1,2],"new_isl_tokens":8,"expected_output_tokens":5}',
      ),
      env,
    );
    expect(res.status).toBe(201);
    expect(calls[0]?.object).toBe(trackerName({ replica: "primary", model: "m", tenant: "g" }));
    const input = calls[0]?.args[0] as AddInput;
    expect(input.hashes).toEqual(BigUint64Array.of(18446744073709551615n, 2n));
    expect(input).toMatchObject({
      requestId: "r",
      workerId: 7n,
      dpRank: 1,
      newIslTokens: 8,
      expectedOutputTokens: 5,
    });
  });

  it("POST /prefill_complete and /free answer 200 ok, and 404 with the tracker's text", async () => {
    const missing = "no slot tracker for model=m tenant=default";
    const { env } = fakeEnv({
      prefillComplete: async () => OK,
      free: async () => ({ ok: false, code: "tracker_not_found", message: missing }),
    });
    const body = { model_name: "m", request_id: "r" };
    const done = await app.request("/prefill_complete", json(body), env);
    expect([done.status, await done.text()]).toEqual([200, '{"status":"ok"}']);
    const freed = await app.request("/free", json(body), env);
    expect([freed.status, await freed.json()]).toEqual([404, { error: missing }]);
  });

  it("routes to the replica named in the header and passes its location hint", async () => {
    const { env, calls } = fakeEnv({ unregister: async () => OK }, {}, "primary,weur");
    const init = json({ worker_id: 3, model_name: "m" });
    const res = await app.request(
      "/unregister",
      { ...init, headers: { ...init.headers, "x-slot-tracker-replica": "weur" } },
      env,
    );
    expect(res.status).toBe(200);
    expect(calls[0]).toMatchObject({
      object: trackerName({ replica: "weur", model: "m", tenant: "default" }),
      hint: "weur",
    });
  });
});

describe("bad input never reaches the tracker", () => {
  const cases: [string, string, number, string][] = [
    ["/register", '{"model_name":"m"}', 422, "missing field `worker_id`"],
    [
      "/add",
      '{"model_name":"m","request_id":"","worker_id":1,"dp_rank":0,"sequence_hashes":[]}',
      422,
      "field `request_id`: expected a string of 1..512 UTF-8 bytes",
    ],
    [
      "/add",
      '{"model_name":"m","request_id":"r","worker_id":1,"dp_rank":0,"sequence_hashes":[1.5]}',
      422,
      "field `sequence_hashes[0]`: expected a 64-bit integer (-9223372036854775808..18446744073709551615)",
    ],
    [
      "/free",
      '{"model_name":"m","tenant_id":"a","routing_group":"b","request_id":"r"}',
      400,
      "fields `tenant_id` and `routing_group` are aliases but differ; send one of them",
    ],
    [
      "/potential_loads",
      '{"model_name":"m",',
      400,
      "invalid JSON at byte 18: unexpected end of input, expected a string key",
    ],
    [
      "/unregister",
      '{"worker_id":-1,"model_name":"m"}',
      422,
      "field `worker_id`: expected an unsigned 64-bit integer",
    ],
  ];

  for (const [path, body, status, error] of cases) {
    it(`${path} answers ${status} "${error}"`, async () => {
      const { env, calls } = fakeEnv({});
      const res = await app.request(path, json(body), env);
      expect([res.status, await res.json()]).toEqual([status, { error }]);
      expect(calls).toEqual([]);
    });
  }

  it("answers 413 for more than 65,536 hashes", async () => {
    const { env, calls } = fakeEnv({});
    const body = `{"model_name":"m","sequence_hashes":[${new Array(65_537).fill(1).join(",")}]}`;
    const res = await app.request("/potential_loads", json(body), env);
    expect(res.status).toBe(413);
    expect(calls).toEqual([]);
  });

  it("answers 400 for an unknown replica header", async () => {
    const { env, calls } = fakeEnv({});
    const res = await app.request(
      "/workers?model_name=m&tenant_id=t",
      { headers: { "x-slot-tracker-replica": "mars" } },
      env,
    );
    expect([res.status, await res.json()]).toEqual([
      400,
      { error: 'unknown replica "mars"; known replicas: primary' },
    ]);
    expect(calls).toEqual([]);
  });

  it("answers 422 for an empty model_name filter", async () => {
    const { env } = fakeEnv({});
    const res = await app.request("/loads?model_name=", {}, env);
    expect(res.status).toBe(422);
  });
});

describe("listings", () => {
  it("GET /workers with model and tenant asks that one tracker", async () => {
    const { env, calls } = fakeEnv({
      listWorkers: async () => [{ workerId: 9007199254740993n, blockSize: 16, dpStart: 0, dpSize: 1 }],
    });
    const res = await app.request("/workers?model_name=m&routing_group=t", {}, env);
    expect(await res.text()).toBe(
      '[{"worker_id":9007199254740993,"model_name":"m","tenant_id":"t","block_size":16,"dp_start":0,"dp_size":1}]',
    );
    expect(calls.map((c) => c.object)).toEqual([
      trackerName({ replica: "primary", model: "m", tenant: "t" }),
    ]);
  });

  it("GET /loads without filters fans out over the directory and sorts by UTF-8 bytes, worker, rank", async () => {
    // "\u{1F600}" sorts after "\uFFFD" in UTF-8 although its UTF-16 units sort before.
    const trackers = [
      { model: "\u{1F600}", tenant: "default" },
      { model: "\uFFFD", tenant: "default" },
      { model: "a", tenant: "z" },
      { model: "a", tenant: "b" },
    ];
    const { env, calls } = fakeEnv(
      {
        listLoads: async () => [
          { workerId: 2n, dpRank: 0, activePrefillTokens: 1, activeDecodeBlocks: 2 },
          { workerId: 1n, dpRank: 1, activePrefillTokens: 0, activeDecodeBlocks: 0 },
          { workerId: 1n, dpRank: 0, activePrefillTokens: 0, activeDecodeBlocks: 0 },
        ],
      },
      { listTrackers: async () => trackers },
    );
    const res = await app.request("/loads", {}, env);
    const rows = (await res.json()) as {
      model_name: string;
      tenant_id: string;
      worker_id: number;
      dp_rank: number;
    }[];
    expect(rows.map((r) => `${r.model_name}/${r.tenant_id}/${r.worker_id}/${r.dp_rank}`)).toEqual([
      "a/b/1/0",
      "a/b/1/1",
      "a/b/2/0",
      "a/z/1/0",
      "a/z/1/1",
      "a/z/2/0",
      "\uFFFD/default/1/0",
      "\uFFFD/default/1/1",
      "\uFFFD/default/2/0",
      "\u{1F600}/default/1/0",
      "\u{1F600}/default/1/1",
      "\u{1F600}/default/2/0",
    ]);
    expect(Object.keys(rows[0] ?? {})).toEqual([
      "model_name",
      "tenant_id",
      "worker_id",
      "dp_rank",
      "active_prefill_tokens",
      "active_decode_blocks",
    ]);
    expect(calls.filter((c) => c.method === "listLoads")).toHaveLength(4);
  });

  it("GET /workers with only a tenant filters the directory's trackers by tenant", async () => {
    const { env, calls } = fakeEnv(
      { listWorkers: async () => [] },
      {
        listTrackers: async () => [
          { model: "a", tenant: "t" },
          { model: "b", tenant: "u" },
        ],
      },
    );
    const res = await app.request("/workers?tenant_id=t", {}, env);
    expect(await res.json()).toEqual([]);
    expect(calls.filter((c) => c.method === "listWorkers").map((c) => c.object)).toEqual([
      trackerName({ replica: "primary", model: "a", tenant: "t" }),
    ]);
    expect(calls.find((c) => c.method === "listTrackers")?.args).toEqual([]);
  });

  it("POST /potential_loads answers snake_case rows sorted by worker and rank", async () => {
    const { env } = fakeEnv({
      potentialLoads: async () => ({
        ok: true,
        loads: [
          {
            workerId: 18446744073709551615n,
            dpRank: 0,
            potentialPrefillTokens: 5,
            potentialDecodeBlocks: 1,
            activeRequests: 0,
          },
          {
            workerId: 1n,
            dpRank: 1,
            potentialPrefillTokens: 13,
            potentialDecodeBlocks: 4,
            activeRequests: 1,
          },
          { workerId: 1n, dpRank: 0, potentialPrefillTokens: 5, potentialDecodeBlocks: 1, activeRequests: 0 },
        ],
      }),
    });
    const res = await app.request(
      "/potential_loads",
      json({ model_name: "m", sequence_hashes: [1, 2, 4], new_isl_tokens: 5 }),
      env,
    );
    expect(await res.text()).toBe(
      "[" +
        '{"worker_id":1,"dp_rank":0,"potential_prefill_tokens":5,"potential_decode_blocks":1,"active_requests":0},' +
        '{"worker_id":1,"dp_rank":1,"potential_prefill_tokens":13,"potential_decode_blocks":4,"active_requests":1},' +
        '{"worker_id":18446744073709551615,"dp_rank":0,"potential_prefill_tokens":5,"potential_decode_blocks":1,"active_requests":0}' +
        "]",
    );
  });
});

describe("fallbacks and failures", () => {
  it("answers 404 route not found for an unknown path", async () => {
    const res = await app.request("/nope", {}, fakeEnv({}).env);
    expect([res.status, await res.json()]).toEqual([404, { error: "route not found" }]);
  });

  it("answers 405 method not allowed with Allow for a wrong method on a known path", async () => {
    const env = fakeEnv({}).env;
    const get = await app.request("/register", {}, env);
    expect([get.status, await get.json()]).toEqual([405, { error: "method not allowed" }]);
    expect(get.headers.get("allow")).toBe("POST");
    const post = await app.request("/workers", { method: "POST" }, env);
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  it("GET /health answers 200 with an empty body", async () => {
    const res = await app.request("/health", {}, fakeEnv({}).env);
    expect([res.status, await res.text()]).toEqual([200, ""]);
  });

  it("turns an unexpected exception into a 500 internal error and one JSON log line without the body", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const { env } = fakeEnv({
      free: async () => {
        throw new Error("storage exploded");
      },
    });
    const res = await app.request("/free", json({ model_name: "m", request_id: "secret-request" }), env);
    expect([res.status, await res.json()]).toEqual([500, { error: "internal error" }]);
    expect(log).toHaveBeenCalledTimes(1);
    const line = String(log.mock.calls[0]?.[0]);
    expect(JSON.parse(line)).toMatchObject({
      level: "error",
      path: "/free",
      error: "Error: storage exploded",
    });
    expect(line).not.toContain("secret-request");
  });

  it("answers 503 when the object reports overload", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const { env } = fakeEnv({
      free: async () => {
        throw Object.assign(new Error("Durable Object is overloaded"), { overloaded: true });
      },
    });
    const res = await app.request("/free", json({ model_name: "m", request_id: "r" }), env);
    expect(res.status).toBe(503);
  });
});
