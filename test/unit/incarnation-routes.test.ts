/**
 * `incarnation` on `/register` and `POST /selection/workers` at the Worker: parsed as worker ids are
 * (an exact u64), refused with the route's own error style naming the field before any object is
 * called, and passed on exactly, or not at all when absent.
 */
import { describe, expect, it } from "vitest";
import type { CatalogRecord, WorkerUpsert } from "../../durable-objects/core/catalog/catalog-record";
import type { RegisterInput } from "../../durable-objects/types";
import app from "../../src/app";
import { fakeEnv, json, OK } from "./route-fake-env";

const REGISTER = '"worker_id":1,"model_name":"m","block_size":16,"dp_start":0,"dp_size":1';

describe("/register's incarnation", () => {
  for (const bad of ["-1", "18446744073709551616", '"1"', "1.5", "true"]) {
    it(`answers 422 naming the field for ${bad}, calling no object`, async () => {
      for (const partition of ["", ',"routing_group":"g"']) {
        const { env, calls } = fakeEnv({ register: async () => ({ ...OK, created: true }) });
        const res = await app.request(
          "/register",
          json(`{${REGISTER}${partition},"incarnation":${bad}}`),
          env,
        );
        expect([res.status, await res.json()]).toEqual([
          422,
          { error: "field `incarnation`: expected an unsigned 64-bit integer" },
        ]);
        expect(calls).toEqual([]);
      }
    });
  }

  it("passes 2^64 - 1 on exactly, and no incarnation key when the body has none", async () => {
    const seen: RegisterInput[] = [];
    const { env } = fakeEnv({
      register: async (input: RegisterInput) => {
        seen.push(input);
        return { ...OK, created: true };
      },
    });
    for (const extra of [',"incarnation":18446744073709551615', ""]) {
      const res = await app.request("/register", json(`{${REGISTER}${extra}}`), env);
      expect([res.status, await res.json()]).toEqual([201, { status: "ok" }]);
    }
    expect(seen[0]!.incarnation).toBe(18446744073709551615n);
    expect("incarnation" in seen[1]!).toBe(false);
  });
});

describe("POST /selection/workers' incarnation", () => {
  const record: CatalogRecord = {
    workerId: 4n,
    model: "m",
    tenant: "default",
    kvEventsEndpoints: new Map(),
    taints: [],
    topologyDomains: new Map(),
    routerHintSourceControlEndpoints: new Map(),
    lifecycle: "incomplete",
    notSchedulableReasons: ["endpoint is required"],
    incarnation: 18446744073709551615n,
  };

  it("refuses a bad one with serde's 422 text, calling no tracker", async () => {
    const { env, calls } = fakeEnv({ catalogUpsert: async () => ({ ok: true, record }) });
    const res = await app.request("/selection/workers", json('{"worker_id":4,"incarnation":-1}'), env);
    expect(res.status).toBe(422);
    expect(await res.text()).toContain("incarnation: invalid value: integer `-1`, expected u64");
    expect(calls.filter((c) => c.method === "catalogUpsert")).toEqual([]);
  });

  it("passes it on exactly and lists it last in the answer", async () => {
    const seen: WorkerUpsert[] = [];
    const { env } = fakeEnv(
      {
        catalogUpsert: async (input: WorkerUpsert) => {
          seen.push(input);
          return { ok: true, record };
        },
      },
      { workerPartitions: async () => [] },
    );
    const res = await app.request(
      "/selection/workers",
      json('{"worker_id":4,"incarnation":18446744073709551615}'),
      env,
    );
    expect(res.status).toBe(201);
    expect(seen[0]!.incarnation).toBe(18446744073709551615n);
    expect(await res.text()).toMatch(
      /"not_schedulable_reasons":\["endpoint is required"\],"incarnation":18446744073709551615}$/,
    );
  });
});

describe("incarnation in the OpenAPI document", () => {
  type Node = Record<string, unknown>;
  const env = { REPLICAS: "primary", REQUEST_EXPIRY_SECONDS: "300" };

  /** The `incarnation` property under `node`, following `$ref`s into the document's components. */
  function incarnationIn(doc: Node, node: unknown): Node | undefined {
    if (typeof node !== "object" || node === null) return undefined;
    const ref = (node as Node).$ref;
    if (typeof ref === "string") {
      const target = ref
        .slice(2)
        .split("/")
        .reduce<unknown>((at, key) => (at as Node)[key], doc);
      return incarnationIn(doc, target);
    }
    const found = ((node as Node).properties as Node | undefined)?.incarnation as Node | undefined;
    if (found) return found;
    for (const child of Object.values(node)) {
      const inner = incarnationIn(doc, child);
      if (inner) return inner;
    }
    return undefined;
  }

  it("shows the field on both writes and on both listings, as an exact u64", async () => {
    const doc = (await (await app.request("/openapi.json", {}, env)).json()) as Node;
    const op = (path: string, method: string) => ((doc.paths as Node)[path] as Node)[method] as Node;
    const fields = [
      incarnationIn(doc, op("/register", "post").requestBody),
      incarnationIn(doc, (op("/workers", "get").responses as Node)["200"]),
      incarnationIn(doc, op("/selection/workers", "post").requestBody),
      incarnationIn(doc, (op("/selection/workers", "get").responses as Node)["200"]),
    ];
    for (const field of fields) {
      expect(field).toMatchObject({ type: "integer", minimum: 0, format: "uint64" });
    }
  });
});
