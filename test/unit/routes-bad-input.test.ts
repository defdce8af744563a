/**
 * Bad input never reaches a tracker: malformed JSON, missing or mistyped fields, conflicting aliases,
 * too many hashes and unknown replicas are answered by the Worker with no object called.
 */
import { describe, expect, it } from "vitest";
import app from "../../src/app";
import { fakeEnv, json } from "./route-fake-env";

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
