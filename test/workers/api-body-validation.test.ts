/**
 * Bodies the Worker refuses before any object sees them: malformed JSON (400), a body that is not an
 * object (422), missing or mistyped fields (422, naming the field and the element at fault), and
 * hostile input, which is never a 5xx. Each refusal leaves the seeded tracker exactly as it was.
 */
import { describe, expect, it } from "vitest";
import { call, expectError, get, post, SeededTracker, SLOW_TEST_MS } from "./api-http";
import { validBodies } from "./valid-bodies";

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
