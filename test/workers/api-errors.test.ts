import { describe, expect, it } from "vitest";
import {
  add,
  call,
  expectError,
  expectOk,
  get,
  loadsOf,
  post,
  register,
  SeededTracker,
  SLOW_TEST_MS,
  uniqueModel,
  withinLifetime,
} from "./api-http";

const MAX_BODY_BYTES = 2 * 1024 * 1024;

/**
 * A valid body for each write route against a {@link SeededTracker}, to break one part at a time.
 * Each would change the tracker if it were accepted (potential_loads aside, which only reads).
 */
function validBodies(model: string): Record<string, Record<string, unknown>> {
  return {
    "/register": { model_name: model, worker_id: 3, block_size: 16, dp_start: 0, dp_size: 1 },
    "/unregister": { model_name: model, worker_id: 2 },
    "/add": {
      model_name: model,
      request_id: "new",
      worker_id: 1,
      dp_rank: 0,
      sequence_hashes: [1],
      new_isl_tokens: 1,
    },
    "/prefill_complete": { model_name: model, request_id: "live" },
    "/free": { model_name: model, request_id: "live" },
    "/potential_loads": { model_name: model, sequence_hashes: [1], new_isl_tokens: 1 },
  };
}

/** Literal JSON text of `body` with `field` set to the raw `literal`, which JSON.stringify cannot write. */
function withLiteral(body: Record<string, unknown>, field: string, literal: string): string {
  const { [field]: _replaced, ...rest } = body;
  return `${JSON.stringify(rest).slice(0, -1)},"${field}":${literal}}`;
}

/** `value` as JSON padded with trailing whitespace to exactly `bytes` bytes. */
function padded(value: unknown, bytes: number): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(value));
  const out = new Uint8Array(bytes).fill(0x20);
  out.set(json);
  return out;
}

describe("malformed bodies", () => {
  it(
    "answers malformed JSON with 400 {error} on every write route",
    async () => {
      const t = await SeededTracker.create();
      const bodies = [
        `{"model_name":"${t.model}","request_id":"live"`,
        `{"model_name":"${t.model}","request_id":"live"}}`,
        `{'model_name':'${t.model}','request_id':'live'}`,
        `{"model_name":"${t.model}","request_id":"live",}`,
        `{"model_name":"${t.model}","worker_id":01,"request_id":"live"}`,
        `{"model_name":"${t.model}","request_id":"live","sequence_hashes":[NaN]}`,
        `{"model_name":"${t.model}","request_id":"\\x41"}`,
        `{"model_name":"${t.model}","request_id":"live"} {}`,
        "",
        "   ",
        `${"[".repeat(100_000)}${"]".repeat(100_000)}`,
      ];
      for (const path of Object.keys(validBodies(t.model))) {
        // Every malformation on /add; a couple on each other route.
        for (const body of path === "/add" ? bodies : bodies.slice(0, 2)) {
          await t.unchangedBy(`${path} ${body.slice(0, 60)}`, () => expectError(post(path, body), 400, /\S/));
        }
      }
      // Bytes that are not UTF-8 inside a string.
      const bytes = Uint8Array.of(
        ...new TextEncoder().encode(`{"model_name":"${t.model}","request_id":"`),
        0xff,
        0x22,
        0x7d,
      );
      await t.unchangedBy("invalid UTF-8", () =>
        expectError(
          call("POST", "/free", { body: bytes, headers: { "content-type": "application/json" } }),
          400,
          /UTF-8/,
        ),
      );
    },
    SLOW_TEST_MS,
  );

  it(
    "answers a body that is not an object with 422",
    async () => {
      const t = await SeededTracker.create();
      for (const body of [
        "null",
        "42",
        '"free"',
        "[]",
        "true",
        `[{"model_name":"${t.model}","request_id":"live"}]`,
      ]) {
        await t.unchangedBy(body, () => expectError(post("/free", body), 422, /object/));
      }
    },
    SLOW_TEST_MS,
  );
});

describe("missing and mistyped fields", () => {
  it(
    "answers 422 naming each missing required field",
    async () => {
      const t = await SeededTracker.create();
      for (const [path, body] of Object.entries(validBodies(t.model))) {
        for (const field of Object.keys(body)) {
          if (field === "new_isl_tokens") continue;
          const { [field]: _dropped, ...rest } = body;
          await t.unchangedBy(`${path} without ${field}`, () =>
            expectError(post(path, rest), 422, new RegExp(`missing.*\\b${field}\\b`)),
          );
        }
      }
    },
    SLOW_TEST_MS,
  );

  it(
    "answers 422 naming the field for every wrong type",
    async () => {
      const t = await SeededTracker.create();
      const wrong: [string, string, unknown][] = [
        ["/register", "worker_id", "3"],
        ["/register", "block_size", "16"],
        ["/register", "dp_start", true],
        ["/register", "dp_size", [1]],
        ["/register", "model_name", 5],
        ["/register", "tenant_id", 5],
        ["/register", "routing_group", { id: "x" }],
        ["/unregister", "worker_id", {}],
        ["/add", "request_id", 1],
        ["/add", "dp_rank", "0"],
        ["/add", "sequence_hashes", "1,2"],
        ["/add", "sequence_hashes", { 0: 1 }],
        ["/add", "new_isl_tokens", "5"],
        ["/add", "model_name", ""],
        ["/add", "tenant_id", ""],
        ["/prefill_complete", "request_id", ["live"]],
        ["/prefill_complete", "request_id", ""],
        ["/free", "request_id", { id: "live" }],
        ["/potential_loads", "new_isl_tokens", false],
      ];
      for (const [path, field, value] of wrong) {
        const body = { ...validBodies(t.model)[path], [field]: value };
        await t.unchangedBy(`${path} ${field}=${JSON.stringify(value)}`, () =>
          expectError(post(path, body), 422, new RegExp(`\\b${field}\\b`)),
        );
      }
      // The element at fault is named with its index.
      for (const [path, hashes, at] of [
        ["/add", [1, 2, "3"], 2],
        ["/add", [1, null], 1],
        ["/potential_loads", [[1]], 0],
      ] as const) {
        const body = { ...validBodies(t.model)[path], sequence_hashes: hashes };
        await t.unchangedBy(`${path} ${JSON.stringify(hashes)}`, () =>
          expectError(post(path, body), 422, new RegExp(`sequence_hashes\\[${at}\\]`)),
        );
      }
      // Query parameters are checked the same way.
      await t.unchangedBy("empty model_name query", () =>
        expectError(get("/workers", { model_name: "" }), 422, /\bmodel_name\b/),
      );
      await t.unchangedBy("empty tenant_id query", () =>
        expectError(get("/loads", { tenant_id: "" }), 422, /\btenant_id\b/),
      );
    },
    SLOW_TEST_MS,
  );
});

describe("integers are never rounded", () => {
  it(
    "refuses fractions, negatives and values too large for the field with 422 naming it",
    async () => {
      const t = await SeededTracker.create();
      const cases: [string, string, string][] = [
        ["/register", "dp_size", "1.0"],
        ["/register", "block_size", "16.5"],
        ["/register", "block_size", "1e1"],
        ["/register", "worker_id", "3.0"],
        ["/register", "worker_id", "3E0"],
        ["/register", "block_size", "-16"],
        ["/register", "dp_start", "-1"],
        ["/register", "worker_id", "-3"],
        ["/register", "worker_id", "18446744073709551616"],
        ["/register", "worker_id", "-18446744073709551615"],
        ["/register", "worker_id", "1".repeat(400)],
        ["/register", "dp_start", "4294967296"],
        ["/register", "block_size", "4294967296"],
        ["/register", "dp_size", "18446744073709551617"],
        ["/unregister", "worker_id", "2.0"],
        ["/unregister", "worker_id", "36893488147419103234"],
        ["/add", "dp_rank", "0.5"],
        ["/add", "dp_rank", "-1"],
        ["/add", "dp_rank", "4294967296"],
        ["/add", "new_isl_tokens", "2.5"],
        ["/add", "new_isl_tokens", "-1"],
        ["/add", "worker_id", "1.000000000000000000001"],
        ["/add", "sequence_hashes", "[1.0]"],
        ["/add", "sequence_hashes", "[18446744073709551616]"],
        ["/add", "sequence_hashes", "[-9223372036854775809]"],
        ["/add", "sequence_hashes", "[1e3]"],
        ["/potential_loads", "sequence_hashes", "[1, 99999999999999999999999]"],
        ["/potential_loads", "new_isl_tokens", "0.1"],
      ];
      for (const [path, field, literal] of cases) {
        const body = withLiteral(validBodies(t.model)[path]!, field, literal);
        await t.unchangedBy(`${path} ${field}=${literal.slice(0, 40)}`, () =>
          expectError(post(path, body), 422, new RegExp(`\\b${field}\\b`)),
        );
      }
    },
    SLOW_TEST_MS,
  );

  it(
    "accepts the exact bounds of each integer kind",
    () =>
      withinLifetime(async () => {
        const model = uniqueModel();
        await expectOk(
          post(
            "/register",
            `{"model_name":"${model}","worker_id":18446744073709551615,"block_size":4294967295,"dp_start":4294967293,"dp_size":2}`,
          ),
          201,
        );
        await expectOk(
          post(
            "/add",
            `{"model_name":"${model}","request_id":"r","worker_id":18446744073709551615,"dp_rank":4294967294,` +
              `"sequence_hashes":[-9223372036854775808,18446744073709551615,0],"new_isl_tokens":0}`,
          ),
          201,
        );
        expect(await (await get("/loads", { model_name: model })).text()).toBe(
          `[{"model_name":"${model}","tenant_id":"default","worker_id":18446744073709551615,"dp_rank":4294967293,"active_prefill_tokens":0,"active_decode_blocks":0},` +
            `{"model_name":"${model}","tenant_id":"default","worker_id":18446744073709551615,"dp_rank":4294967294,"active_prefill_tokens":0,"active_decode_blocks":3}]`,
        );
      }),
    SLOW_TEST_MS,
  );
});

describe("routes and methods", () => {
  it(
    "answers an unknown route with 404 route not found",
    async () => {
      const t = await SeededTracker.create();
      const body = JSON.stringify(validBodies(t.model)["/register"]);
      for (const [method, path] of [
        ["GET", "/nope"],
        ["POST", "/nope"],
        ["POST", "/register/extra"],
        ["POST", "/v1/register"],
        ["POST", "/Register"],
        ["GET", "/Workers"],
        ["DELETE", "/tracker"],
      ] as const) {
        const init = method === "POST" ? { body } : {};
        await t.unchangedBy(`${method} ${path}`, () =>
          expectError(
            call(method, path, { ...init, headers: { "content-type": "application/json" } }),
            404,
            "route not found",
          ),
        );
      }
    },
    SLOW_TEST_MS,
  );

  it(
    "answers a known route with the wrong method with 405 method not allowed",
    async () => {
      const t = await SeededTracker.create();
      const bodies = validBodies(t.model);
      for (const [method, path] of [
        ["GET", "/register"],
        ["PUT", "/register"],
        ["GET", "/unregister"],
        ["DELETE", "/unregister"],
        ["GET", "/add"],
        ["PATCH", "/prefill_complete"],
        ["GET", "/free"],
        ["PUT", "/free"],
        ["POST", "/workers"],
        ["DELETE", "/workers"],
        ["POST", "/loads"],
        ["GET", "/potential_loads"],
        ["POST", "/health"],
      ] as const) {
        const init = method === "GET" ? {} : { body: JSON.stringify(bodies[path] ?? bodies["/free"]) };
        await t.unchangedBy(`${method} ${path}`, () =>
          expectError(
            call(method, path, { ...init, headers: { "content-type": "application/json" } }),
            405,
            "method not allowed",
          ),
        );
      }
    },
    SLOW_TEST_MS,
  );
});

describe("content types and sizes", () => {
  it(
    "answers an unsupported or missing content type with 415",
    async () => {
      const t = await SeededTracker.create();
      const body = JSON.stringify(validBodies(t.model)["/free"]);
      for (const type of [
        "text/plain",
        "application/xml",
        "multipart/form-data; boundary=x",
        "application/jsonp",
      ]) {
        await t.unchangedBy(type, () =>
          expectError(
            call("POST", "/free", { body, headers: { "content-type": type } }),
            415,
            /content type/,
          ),
        );
      }
      // A byte body gets no default content type; a string body gets text/plain.
      const bytes = new TextEncoder().encode(body);
      expect(new Request("http://x/free", { method: "POST", body: bytes }).headers.has("content-type")).toBe(
        false,
      );
      await t.unchangedBy("no content type", () =>
        expectError(call("POST", "/free", { body: bytes }), 415, /content type/),
      );
      await t.unchangedBy("default text/plain", () =>
        expectError(call("POST", "/free", { body }), 415, /content type/),
      );
    },
    SLOW_TEST_MS,
  );

  it(
    "answers a body over 2 MiB with 413 when Content-Length says so",
    async () => {
      const t = await SeededTracker.create();
      const body = padded(validBodies(t.model)["/free"], MAX_BODY_BYTES + 1);
      await t.unchangedBy("2 MiB + 1 with Content-Length", () =>
        expectError(
          call("POST", "/free", {
            body,
            headers: { "content-type": "application/json", "content-length": String(body.byteLength) },
          }),
          413,
          /2097152 bytes/,
        ),
      );
    },
    SLOW_TEST_MS,
  );

  it(
    "answers a streamed body over 2 MiB with 413 when no Content-Length is sent",
    async () => {
      const t = await SeededTracker.create();
      const body = padded(validBodies(t.model)["/free"], MAX_BODY_BYTES + 1);
      const streamed = () => {
        const chunk = 64 * 1024;
        let offset = 0;
        const stream = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (offset >= body.byteLength) return controller.close();
            controller.enqueue(body.slice(offset, offset + chunk));
            offset += chunk;
          },
        });
        const request = new Request("http://x/free", {
          method: "POST",
          body: stream,
          headers: { "content-type": "application/json" },
        });
        expect(request.headers.has("content-length")).toBe(false);
        return request;
      };
      await t.unchangedBy("2 MiB + 1 streamed", () => {
        const request = streamed();
        return expectError(
          call("POST", "/free", { body: request.body, headers: request.headers }),
          413,
          /2097152 bytes/,
        );
      });
    },
    SLOW_TEST_MS,
  );

  it(
    "accepts a body of exactly 2 MiB",
    async () => {
      const model = uniqueModel();
      const body = padded(
        { model_name: model, worker_id: 1, block_size: 16, dp_start: 0, dp_size: 1 },
        MAX_BODY_BYTES,
      );
      expect(body.byteLength).toBe(MAX_BODY_BYTES);
      await expectOk(
        call("POST", "/register", { body, headers: { "content-type": "application/json" } }),
        201,
      );
      expect(await loadsOf({ model })).toEqual([
        {
          model_name: model,
          tenant_id: "default",
          worker_id: 1,
          dp_rank: 0,
          active_prefill_tokens: 0,
          active_decode_blocks: 0,
        },
      ]);
    },
    SLOW_TEST_MS,
  );

  it(
    "answers 413 to more than 65,536 sequence hashes and accepts 65,536",
    async () => {
      const t = await SeededTracker.create();
      const tooMany = Array.from({ length: 65_537 }, (_, i) => i);
      const bodies = validBodies(t.model);
      for (const path of ["/add", "/potential_loads"]) {
        await t.unchangedBy(`${path} with 65,537 hashes`, () =>
          expectError(post(path, { ...bodies[path], sequence_hashes: tooMany }), 413, /sequence_hashes/),
        );
      }
      await withinLifetime(async () => {
        const scope = { model: uniqueModel() };
        await expectOk(register(scope, 1), 201);
        await expectOk(add(scope, "long", 1, 0, tooMany.slice(1), 0), 201);
        expect(await loadsOf(scope)).toMatchObject([{ active_decode_blocks: 65_536 }]);
      });
    },
    SLOW_TEST_MS,
  );

  it(
    "refuses a model_name or tenant_id over 256 bytes and a request_id over 512 bytes, counting bytes",
    async () => {
      const t = await SeededTracker.create();
      const bodies = validBodies(t.model);
      // 86 euro signs are 86 UTF-16 units but 258 UTF-8 bytes; 171 of them are 513 bytes.
      for (const long of ["m".repeat(257), "\u20ac".repeat(86)]) {
        await t.unchangedBy(`model_name of ${long.length} chars`, async () => {
          await expectError(
            post("/register", { ...bodies["/register"], model_name: long }),
            422,
            /\bmodel_name\b/,
          );
          await expectError(get("/loads", { model_name: long }), 422, /\bmodel_name\b/);
        });
        await t.unchangedBy(`tenant_id of ${long.length} chars`, async () => {
          await expectError(post("/add", { ...bodies["/add"], tenant_id: long }), 422, /\btenant_id\b/);
          await expectError(get("/workers", { tenant_id: long }), 422, /\btenant_id\b/);
        });
      }
      for (const long of ["r".repeat(513), "\u20ac".repeat(171)]) {
        await t.unchangedBy(`request_id of ${long.length} chars`, async () => {
          await expectError(post("/add", { ...bodies["/add"], request_id: long }), 422, /\brequest_id\b/);
          await expectError(post("/free", { ...bodies["/free"], request_id: long }), 422, /\brequest_id\b/);
        });
      }
      // The limits themselves are accepted.
      await withinLifetime(async () => {
        const model = `${uniqueModel()}-`.padEnd(256, "m");
        const tenant = "\u20ac".repeat(85);
        const requestId = "r".repeat(512);
        await expectOk(register({ model, tenant }, 1), 201);
        await expectOk(add({ model, tenant }, requestId, 1, 0, [1], 2), 201);
        await expectError(
          add({ model, tenant }, requestId, 1, 0, [1], 2),
          409,
          `Request ${requestId} already exists (assigned to worker WorkerWithDpRank { worker_id: 1, dp_rank: 0 })`,
        );
      });
    },
    SLOW_TEST_MS,
  );
});

describe("replica selection", () => {
  it(
    "answers 400 to an unknown x-slot-tracker-replica and serves a known one",
    async () => {
      const t = await SeededTracker.create();
      const replica = { "x-slot-tracker-replica": "mars" };
      const bodies = validBodies(t.model);
      for (const path of Object.keys(bodies)) {
        await t.unchangedBy(`${path} on replica mars`, () =>
          expectError(post(path, bodies[path], replica), 400, /replica.*mars|mars.*replica/),
        );
      }
      await t.unchangedBy("listings on replica mars", async () => {
        await expectError(get("/workers", { model_name: t.model }, replica), 400, /mars/);
        await expectError(get("/loads", {}, replica), 400, /mars/);
      });
      const known = await get("/workers", { model_name: t.model }, { "x-slot-tracker-replica": "primary" });
      expect(known.status).toBe(200);
      expect(await known.text()).toContain(`{"worker_id":2,"model_name":"${t.model}"`);
    },
    SLOW_TEST_MS,
  );
});

describe("hostile input", () => {
  it(
    "never answers 5xx, always with a JSON {error}",
    async () => {
      const t = await SeededTracker.create();
      const model = t.model;
      const bodies: [string, string, number][] = [
        ["/add", `{"__proto__":{"model_name":"${model}"},"request_id":"x"}`, 422],
        ["/free", `{"model_name":"${model}","model_name":"${model}","request_id":"live"}`, 400],
        [
          "/register",
          `{"model_name":"${model}","worker_id":1e400,"block_size":16,"dp_start":0,"dp_size":1}`,
          422,
        ],
        [
          "/register",
          `{"model_name":"${model}","worker_id":${"9".repeat(100_000)},"block_size":16,"dp_start":0,"dp_size":1}`,
          422,
        ],
        ["/free", `{"model_name":"\\ud800","request_id":"live"}`, 400],
        ["/free", `{"model_name":"${model}\\u0000","request_id":"live"}`, 404],
        [
          "/potential_loads",
          `{"model_name":"${model}","sequence_hashes":${"[".repeat(70)}${"]".repeat(70)}}`,
          400,
        ],
        ["/potential_loads", `{"model_name":"${model}","sequence_hashes":[${"-0,".repeat(10)}0]}`, 200],
      ];
      for (const [path, body, status] of bodies) {
        await t.unchangedBy(`${path} ${body.slice(0, 80)}`, async () => {
          const res = await post(path, body);
          const text = await res.clone().text();
          expect(res.status, `${path} ${body.slice(0, 80)} → ${text.slice(0, 200)}`).toBe(status);
          if (status >= 400) await expectError(res, status, /\S/);
        });
      }
    },
    SLOW_TEST_MS,
  );
});
