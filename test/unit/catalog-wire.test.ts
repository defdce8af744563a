import { describe, expect, it } from "vitest";
import { readiness } from "../../durable-objects/core/catalog/catalog-listing";
import {
  catalogRecordToWire,
  readinessStatus,
  readinessToWire,
} from "../../src/schema/selection/catalog-wire";
import { stringifyJson } from "../../src/wire/json-write";
import { BIG_ID, built, COMPLETE } from "./catalog-fixtures";

/** Field names in the order the JSON text has them. */
function keysOf(json: string): string[] {
  return [...json.matchAll(/"([a-z_]+)":/g)].map((match) => match[1] as string);
}

const ALWAYS = [
  "worker_id",
  "model_name",
  "routing_group",
  "lifecycle",
  "endpoint",
  "kv_events_endpoint",
  "replay_endpoint",
  "block_size",
  "data_parallel_start_rank",
  "data_parallel_size",
  "max_num_batched_tokens",
  "total_kv_blocks",
  "stable_routing_id",
  "is_eagle",
  "taints",
  "topology_domains",
  "kv_transfer_domain",
  "kv_transfer_enforcement",
  "kv_transfer_preferred_weight",
];

describe("a catalog record on the wire", () => {
  it("writes every field in Dynamo's declaration order", () => {
    const { record } = built({
      workerId: BIG_ID,
      model: "llama",
      tenant: "acme",
      endpoint: "http://w:8000",
      kvEventsEndpoint: "tcp://w:5557",
      kvEventsEndpoints: new Map([[1, "tcp://w:5558"]]),
      replayEndpoint: "tcp://w:5559",
      blockSize: 16,
      dpStart: 1,
      dpSize: 1,
      maxNumBatchedTokens: 8192n,
      totalKvBlocks: 18446744073709551615n,
      stableRoutingId: "s",
      isEagle: false,
      taints: ["t"],
      topologyDomains: new Map([["zone", "a"]]),
      kvTransferDomain: "zone",
      kvTransferEnforcement: "preferred",
      kvTransferPreferredWeight: 0.5,
      routerHintWorkerType: "decode",
      routerHintSourceControlEndpoints: new Map([[1, "tcp://w:6000"]]),
      kvEventSourceMode: "state_agent_v2",
    });
    const wire = catalogRecordToWire(record);
    const expected = [...ALWAYS];
    expected.splice(6, 0, "kv_events_endpoints");
    expected.push("router_hint_worker_type", "router_hint_source_control_endpoints", "kv_event_source_mode");
    expect(Object.keys(wire)).toEqual(expected);
    const json = stringifyJson(wire);
    expect(keysOf(json).filter((key) => expected.includes(key))).toEqual(expected);
    expect(json).toContain(`"worker_id":${BIG_ID},`);
    expect(json).toContain('"total_kv_blocks":18446744073709551615,');
  });

  it("writes absent options as null and leaves out the five fields Dynamo skips when empty", () => {
    const { record } = built({ workerId: 3n, endpoint: "http://w3", blockSize: 16 });
    expect(stringifyJson(catalogRecordToWire(record))).toBe(
      '{"worker_id":3,"model_name":"default","routing_group":"default","lifecycle":"schedulable",' +
        '"endpoint":"http://w3","kv_events_endpoint":null,"replay_endpoint":null,"block_size":16,' +
        '"data_parallel_start_rank":null,"data_parallel_size":null,"max_num_batched_tokens":null,' +
        '"total_kv_blocks":null,"stable_routing_id":null,"is_eagle":null,"taints":[],"topology_domains":{},' +
        '"kv_transfer_domain":null,"kv_transfer_enforcement":null,"kv_transfer_preferred_weight":null}',
    );
  });

  it("ends an incomplete record with its reasons", () => {
    const wire = catalogRecordToWire(built({ workerId: 4n }).record);
    expect(Object.keys(wire)).toEqual([...ALWAYS, "not_schedulable_reasons"]);
    expect(wire.not_schedulable_reasons).toEqual([
      "endpoint is required",
      "block_size must be greater than 0",
    ]);
  });

  it("writes maps in a stable order, ranks ascending and labels by UTF-8 bytes", () => {
    const { record } = built({
      ...COMPLETE,
      kvEventsEndpoints: new Map([
        [10, "c"],
        [2, "b"],
        [0, "a"],
      ]),
      topologyDomains: new Map([
        ["\u{1F600}", "3"],
        ["__proto__", "2"],
        ["\uFF5E", "1"],
        ["a", "0"],
      ]),
    });
    const json = stringifyJson(catalogRecordToWire(record));
    expect(json).toContain('"kv_events_endpoints":{"0":"a","2":"b","10":"c"}');
    expect(json).toContain('"topology_domains":{"__proto__":"2","a":"0","\uFF5E":"1","\u{1F600}":"3"}');
  });
});

describe("/ready on the wire", () => {
  it("answers 200 with a schedulable worker, 503 without, with the same body shape", () => {
    const schedulable = built(COMPLETE).record;
    const incomplete = built({ workerId: 1n }).record;
    const ready = readiness([schedulable, incomplete]);
    expect(readinessStatus(ready)).toBe(200);
    const wire = readinessToWire(ready);
    expect(Object.keys(wire)).toEqual(["ready", "schedulable_workers", "workers"]);
    expect(wire).toMatchObject({ ready: true, schedulable_workers: 1 });
    expect(wire.workers.map((w) => w.worker_id)).toEqual([1n, 7n]);
    expect(readinessStatus(readiness([incomplete]))).toBe(503);
  });
});
