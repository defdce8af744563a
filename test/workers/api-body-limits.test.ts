/**
 * Content types and sizes: an unsupported or missing content type is 415; a body over 2 MiB is 413
 * whether Content-Length says so or it is streamed; more than 65,536 hashes is 413; names and request
 * ids are bounded in UTF-8 bytes. Each limit itself is accepted, and each refusal changes nothing.
 */
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
} from "./api-http";
import { validBodies } from "./valid-bodies";

const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** `value` as JSON padded with trailing whitespace to exactly `bytes` bytes. */
function padded(value: unknown, bytes: number): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(value));
  const out = new Uint8Array(bytes).fill(0x20);
  out.set(json);
  return out;
}

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
      {
        const scope = { model: uniqueModel() };
        await expectOk(register(scope, 1), 201);
        await expectOk(add(scope, "long", 1, 0, tooMany.slice(1), 0), 201);
        expect(await loadsOf(scope)).toMatchObject([{ active_decode_blocks: 65_536 }]);
      }
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
      {
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
      }
    },
    SLOW_TEST_MS,
  );
});
