/**
 * Integer fields are never rounded: fractions, negatives and values too large for their kind are
 * refused with 422 naming the field and change nothing, while the exact bounds of each kind are
 * accepted.
 */
import { describe, expect, it } from "vitest";
import { expectError, expectOk, get, post, SeededTracker, SLOW_TEST_MS, uniqueModel } from "./api-http";
import { validBodies } from "./valid-bodies";

/** Literal JSON text of `body` with `field` set to the raw `literal`, which JSON.stringify cannot write. */
function withLiteral(body: Record<string, unknown>, field: string, literal: string): string {
  const { [field]: _replaced, ...rest } = body;
  return `${JSON.stringify(rest).slice(0, -1)},"${field}":${literal}}`;
}

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
    async () => {
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
    },
    SLOW_TEST_MS,
  );
});
