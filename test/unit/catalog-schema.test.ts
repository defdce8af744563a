import { describe, expect, it } from "vitest";
import { patchRecord } from "../../durable-objects/core/catalog/build-record";
import { CATALOG_CONFIG } from "../../durable-objects/core/catalog/catalog-record";
import { HttpError } from "../../src/http/errors";
import { SchemaError } from "../../src/schema/schema";
import {
  workerIdParam,
  workerPatchBody,
  workerPatchOf,
  workerRequestBody,
  workerUpsertOf,
} from "../../src/schema/selection/catalog";
import { rustDebugString, rustFloat } from "../../src/schema/selection/serde-text";
import { parseJson } from "../../src/wire/json";
import { built } from "./catalog-fixtures";

const SENTENCE = "Failed to deserialize the JSON body into the target type";

function post(json: string) {
  return workerRequestBody.parse(parseJson(json), "");
}

function refusal(run: () => unknown): SchemaError {
  try {
    run();
  } catch (err) {
    if (err instanceof SchemaError) return err;
    throw err;
  }
  throw new Error("validated without error");
}

/** The text after axum's sentence, for a POST body. */
function postError(json: string): string {
  const err = refusal(() => post(json));
  expect(err.kind).toBe("invalid");
  expect(err.message.startsWith(`${SENTENCE}: `)).toBe(true);
  return err.message.slice(SENTENCE.length + 2);
}

describe("POST /workers body", () => {
  it("requires worker_id, in axum's and serde's words", () => {
    expect(postError("{}")).toBe("missing field `worker_id`");
    expect(postError('{"model_name":"m","endpoint":"http://w"}')).toBe("missing field `worker_id`");
  });

  it("keeps ids up to 2^64 - 1 exact and refuses negative, fractional and larger ones", () => {
    expect(post('{"worker_id":18446744073709551615}').worker_id).toBe(18446744073709551615n);
    expect(post('{"worker_id":9007199254740993}').worker_id).toBe(9007199254740993n);
    expect(postError('{"worker_id":-1}')).toBe("worker_id: invalid value: integer `-1`, expected u64");
    expect(postError('{"worker_id":1.5}')).toBe(
      "worker_id: invalid type: floating point `1.5`, expected u64",
    );
    expect(postError('{"worker_id":7.0}')).toBe(
      "worker_id: invalid type: floating point `7.0`, expected u64",
    );
    expect(postError('{"worker_id":18446744073709551616}')).toBe(
      "worker_id: invalid type: floating point `1.8446744073709552e19`, expected u64",
    );
    expect(postError('{"worker_id":"7"}')).toBe('worker_id: invalid type: string "7", expected u64');
    expect(postError('{"worker_id":null}')).toBe("worker_id: invalid type: null, expected u64");
  });

  it("names the mistyped field with serde's wording for each type", () => {
    const cases: [string, string][] = [
      ['"block_size":true', "block_size: invalid type: boolean `true`, expected u32"],
      [
        '"data_parallel_size":4294967296',
        "data_parallel_size: invalid value: integer `4294967296`, expected u32",
      ],
      ['"is_eagle":"yes"', 'is_eagle: invalid type: string "yes", expected a boolean'],
      ['"endpoint":5', "endpoint: invalid type: integer `5`, expected a string"],
      ['"taints":"a"', 'taints: invalid type: string "a", expected a sequence'],
      ['"taints":["a",1]', "taints[1]: invalid type: integer `1`, expected a string"],
      ['"topology_domains":[]', "topology_domains: invalid type: sequence, expected a map"],
      ['"topology_domains":{"zone":{}}', "topology_domains.zone: invalid type: map, expected a string"],
      [
        '"kv_transfer_enforcement":"sometimes"',
        "kv_transfer_enforcement: unknown variant `sometimes`, expected `required` or `preferred`",
      ],
      [
        '"kv_transfer_preferred_weight":"x"',
        'kv_transfer_preferred_weight: invalid type: string "x", expected f32',
      ],
      [
        '"kv_transfer_preferred_weight":1e39',
        "kv_transfer_preferred_weight: invalid value: floating point `1e39`, expected a finite f32",
      ],
      ['"max_num_batched_tokens":-5', "max_num_batched_tokens: invalid value: integer `-5`, expected u64"],
      ['"model_name":null', "model_name: invalid type: null, expected a string"],
      ['"model_name":""', "model_name: invalid length 0, expected a string of 1..256 UTF-8 bytes"],
      ['"taints":null', "taints: invalid type: null, expected a sequence"],
    ];
    for (const [fields, text] of cases) expect(postError(`{"worker_id":1,${fields}}`)).toBe(text);
    expect(postError(`{"worker_id":1,"endpoint":"${"é".repeat(1025)}"}`)).toBe(
      "endpoint: invalid length 2050, expected a string of at most 2048 UTF-8 bytes",
    );
  });

  it("reads rank-map keys as serde_json reads a u32 key: a decimal number in quotes", () => {
    expect(
      post('{"worker_id":1,"kv_events_endpoints":{"3":"tcp://a","-0":"tcp://b"}}').kv_events_endpoints,
    ).toEqual({
      "0": "tcp://b",
      "3": "tcp://a",
    });
    const field = (key: string) => postError(`{"worker_id":1,"kv_events_endpoints":{"${key}":"tcp://a"}}`);
    expect(field("-1")).toBe("kv_events_endpoints: invalid value: integer `-1`, expected u32");
    expect(field("1.5")).toBe("kv_events_endpoints: invalid type: floating point `1.5`, expected u32");
    expect(field("4294967296")).toBe(
      "kv_events_endpoints: invalid value: integer `4294967296`, expected u32",
    );
    expect(field("rank0")).toBe("kv_events_endpoints: invalid value: expected key to be a number in quotes");
    expect(postError('{"worker_id":1,"router_hint_source_control_endpoints":{"2":7}}')).toBe(
      "router_hint_source_control_endpoints.2: invalid type: integer `7`, expected a string",
    );
  });

  it("reports the first wrong field in the body's order before a missing one", () => {
    expect(postError('{"block_size":"16","endpoint":3}')).toBe(
      'block_size: invalid type: string "16", expected u32',
    );
    expect(postError("[]")).toBe("invalid type: sequence, expected struct WorkerRequest");
  });

  it("applies Dynamo's defaults, reads null as absent for options and ignores unknown fields", () => {
    const body = post('{"worker_id":5,"endpoint":null,"tenant_id":"acme","block_size":16,"nonsense":[1]}');
    expect(body).toMatchObject({
      worker_id: 5n,
      model_name: "default",
      routing_group: "default",
      block_size: 16,
    });
    expect(body.endpoint).toBeUndefined();
    expect(body.taints).toEqual([]);
    const upsert = workerUpsertOf(body);
    expect(upsert).toMatchObject({ workerId: 5n, model: "default", tenant: "default", blockSize: 16 });
    expect(upsert.kvEventsEndpoints).toEqual(new Map());
  });

  it("keeps a weight as the shortest decimal of its f32 value", () => {
    const weight = (w: string) =>
      post(`{"worker_id":1,"kv_transfer_preferred_weight":${w}}`).kv_transfer_preferred_weight;
    expect(weight("0.1")).toBe(0.1);
    expect(weight("0.123456789")).toBe(0.12345679);
    expect(weight("2")).toBe(2);
  });
});

describe("PATCH /workers/{id} body", () => {
  it("reads null as absent everywhere, so a patch cannot clear a field", () => {
    const body = workerPatchBody.parse(parseJson('{"endpoint":null,"taints":null,"block_size":32}'), "");
    const previous = built({ workerId: 1n, endpoint: "http://w", blockSize: 16, taints: ["t"] }).record;
    const result = patchRecord(previous, workerPatchOf(body), { config: CATALOG_CONFIG, fix: undefined });
    expect(result.ok && result.record).toMatchObject({ endpoint: "http://w", taints: ["t"], blockSize: 32 });
  });

  it("replaces a map given whole, and ignores fields PATCH does not take", () => {
    const body = workerPatchBody.parse(
      parseJson('{"topology_domains":{"zone":"b"},"model_name":"other"}'),
      "",
    );
    expect(workerPatchOf(body).topologyDomains).toEqual(new Map([["zone", "b"]]));
    expect("model_name" in body).toBe(false);
    expect(refusal(() => workerPatchBody.parse(parseJson('{"block_size":-1}'), "")).message).toBe(
      `${SENTENCE}: block_size: invalid value: integer \`-1\`, expected u32`,
    );
  });
});

describe("the {worker_id} path segment", () => {
  it("reads u64 decimals as Rust does and refuses the rest with axum's Path text", () => {
    expect(workerIdParam("18446744073709551615")).toBe(18446744073709551615n);
    expect(workerIdParam("+7")).toBe(7n);
    expect(workerIdParam("0007")).toBe(7n);
    for (const raw of ["18446744073709551616", "-1", "abc", "", "1.0", "1e3"]) {
      let error: unknown;
      try {
        workerIdParam(raw);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(HttpError);
      expect((error as HttpError).status).toBe(400);
      expect((error as HttpError).message).toBe(`Invalid URL: Cannot parse \`${raw}\` to a \`u64\``);
    }
  });
});

describe("serde's renderings", () => {
  it("prints floats as serde_json's ryu does", () => {
    const cases: [number, string][] = [
      [5, "5.0"],
      [1.5, "1.5"],
      [-0.25, "-0.25"],
      [1e15, "1000000000000000.0"],
      [1e16, "1e16"],
      [1.8446744073709552e19, "1.8446744073709552e19"],
      [0.0001, "0.0001"],
      [1e-7, "1e-7"],
      [123456.789, "123456.789"],
    ];
    for (const [n, text] of cases) expect(rustFloat(n)).toBe(text);
  });

  it("prints strings as Rust's Debug does", () => {
    expect(rustDebugString('a"b\\c\nd\te\u0001é')).toBe('"a\\"b\\\\c\\nd\\te\\u{1}é"');
  });
});
