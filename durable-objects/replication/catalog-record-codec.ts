/**
 * A catalog record's fields in MessagePack, for the catalog upsert event (`catalog-codec.ts`) and so
 * also for the row that stores it: Dynamo's `WorkerRequest` names, absent optionals left out, rank
 * maps and label maps as `[key, value]` pairs and taints as an array, each in a fixed order (ranks
 * ascending, texts by UTF-8 bytes), so one record is always the same bytes, and then our own
 * `incarnation` (u64) when the record has one. The id is not written: it is the event's worker.
 */
import type { CatalogFields, KvTransferEnforcement } from "../core/catalog/catalog-record";
import { compareUtf8 } from "../core/order";
import { oneOf, readMap, requireKeys } from "./map-fields";
import type { MsgpackReader } from "./msgpack-reader";
import type { MsgpackWriter } from "./msgpack-writer";

const ENFORCEMENTS: readonly KvTransferEnforcement[] = ["required", "preferred"];

/** The optional scalars, in `WorkerRequest` order: name, how to write a present value. */
type Scalar = readonly [string, (w: MsgpackWriter) => void];

export function writeFields(w: MsgpackWriter, f: CatalogFields): void {
  const text = (name: string, value: string | undefined): Scalar[] =>
    value === undefined ? [] : [[name, (x) => x.str(value)]];
  const u32 = (name: string, value: number | undefined): Scalar[] =>
    value === undefined ? [] : [[name, (x) => x.u32(value, name)]];
  const u64 = (name: string, value: bigint | undefined): Scalar[] =>
    value === undefined ? [] : [[name, (x) => x.bigU64(value, name)]];
  const scalars: Scalar[] = [
    ...text("endpoint", f.endpoint),
    ...text("kv_events_endpoint", f.kvEventsEndpoint),
    ...text("replay_endpoint", f.replayEndpoint),
    ...u32("block_size", f.blockSize),
    ...u32("data_parallel_start_rank", f.dpStart),
    ...u32("data_parallel_size", f.dpSize),
    ...u64("max_num_batched_tokens", f.maxNumBatchedTokens),
    ...u64("total_kv_blocks", f.totalKvBlocks),
    ...text("stable_routing_id", f.stableRoutingId),
    ...(f.isEagle === undefined ? [] : [["is_eagle", (x: MsgpackWriter) => x.bool(f.isEagle!)] as Scalar]),
    ...text("kv_transfer_domain", f.kvTransferDomain),
    ...text("kv_transfer_enforcement", f.kvTransferEnforcement),
    ...(f.kvTransferPreferredWeight === undefined
      ? []
      : [
          [
            "kv_transfer_preferred_weight",
            (x: MsgpackWriter) => x.f64(f.kvTransferPreferredWeight!),
          ] as Scalar,
        ]),
    ...text("router_hint_worker_type", f.routerHintWorkerType),
    ...text("kv_event_source_mode", f.kvEventSourceMode),
    // Ours, after Dynamo's: a record without one is the same bytes as before incarnations.
    ...u64("incarnation", f.incarnation),
  ];
  w.mapHeader(6 + scalars.length);
  w.str("model_name");
  w.str(f.model);
  w.str("routing_group");
  w.str(f.tenant);
  for (const [name, write] of scalars) {
    w.str(name);
    write(w);
  }
  w.str("kv_events_endpoints");
  writeRankMap(w, f.kvEventsEndpoints);
  w.str("taints");
  w.arrayHeader(f.taints.length);
  for (const taint of [...f.taints].sort(compareUtf8)) w.str(taint);
  w.str("topology_domains");
  const domains = [...f.topologyDomains.keys()].sort(compareUtf8);
  w.arrayHeader(domains.length);
  for (const domain of domains) {
    w.arrayHeader(2);
    w.str(domain);
    w.str(f.topologyDomains.get(domain)!);
  }
  w.str("router_hint_source_control_endpoints");
  writeRankMap(w, f.routerHintSourceControlEndpoints);
}

function writeRankMap(w: MsgpackWriter, map: ReadonlyMap<number, string>): void {
  const ranks = [...map.keys()].sort((a, b) => a - b);
  w.arrayHeader(ranks.length);
  for (const rank of ranks) {
    w.arrayHeader(2);
    w.u32(rank, "rank");
    w.str(map.get(rank)!);
  }
}

/** The record's `workerId` is 0 here: the event's `worker.worker_id` is its id (`event-decoder.ts`). */
/** The record's `workerId` is 0 here: the event's `worker.worker_id` is its id. */
export function readFields(r: MsgpackReader): CatalogFields {
  const f: { -readonly [K in keyof CatalogFields]: CatalogFields[K] } = {
    workerId: 0n,
    model: "",
    tenant: "",
    kvEventsEndpoints: new Map(),
    taints: [],
    topologyDomains: new Map(),
    routerHintSourceControlEndpoints: new Map(),
  };
  const seen = readMap(r, "record", (key) => {
    switch (key) {
      case "model_name":
        f.model = r.str("model_name");
        return 1;
      case "routing_group":
        f.tenant = r.str("routing_group");
        return 2;
      case "endpoint":
        f.endpoint = r.str(key);
        return 4;
      case "kv_events_endpoint":
        f.kvEventsEndpoint = r.str(key);
        return 8;
      case "replay_endpoint":
        f.replayEndpoint = r.str(key);
        return 16;
      case "block_size":
        f.blockSize = r.u32(key);
        return 32;
      case "data_parallel_start_rank":
        f.dpStart = r.u32(key);
        return 64;
      case "data_parallel_size":
        f.dpSize = r.u32(key);
        return 128;
      case "max_num_batched_tokens":
        f.maxNumBatchedTokens = r.bigU64(key);
        return 256;
      case "total_kv_blocks":
        f.totalKvBlocks = r.bigU64(key);
        return 512;
      case "stable_routing_id":
        f.stableRoutingId = r.str(key);
        return 1 << 10;
      case "is_eagle":
        f.isEagle = r.bool(key);
        return 1 << 11;
      case "kv_transfer_domain":
        f.kvTransferDomain = r.str(key);
        return 1 << 12;
      case "kv_transfer_enforcement":
        f.kvTransferEnforcement = oneOf(r, key, ENFORCEMENTS);
        return 1 << 13;
      case "kv_transfer_preferred_weight":
        f.kvTransferPreferredWeight = r.f64(key);
        return 1 << 14;
      case "router_hint_worker_type":
        f.routerHintWorkerType = r.str(key);
        return 1 << 15;
      case "kv_event_source_mode":
        f.kvEventSourceMode = r.str(key);
        return 1 << 16;
      case "kv_events_endpoints":
        f.kvEventsEndpoints = readRankMap(r, key);
        return 1 << 17;
      case "taints": {
        const taints: string[] = [];
        for (let n = r.arrayHeader(key); n > 0; n--) taints.push(r.str("taint"));
        f.taints = taints;
        return 1 << 18;
      }
      case "topology_domains": {
        const domains = new Map<string, string>();
        for (let n = r.arrayHeader(key); n > 0; n--) {
          if (r.arrayHeader("domain") !== 2) r.fail("domain", "[domain, value]");
          const domain = r.str("domain");
          domains.set(domain, r.str("domain value"));
        }
        f.topologyDomains = domains;
        return 1 << 19;
      }
      case "router_hint_source_control_endpoints":
        f.routerHintSourceControlEndpoints = readRankMap(r, key);
        return 1 << 20;
      case "incarnation":
        f.incarnation = r.bigU64(key);
        return 1 << 21;
      default:
        return 0;
    }
  });
  requireKeys("record", seen, 3, "model_name, routing_group");
  return f;
}

function readRankMap(r: MsgpackReader, what: string): Map<number, string> {
  const map = new Map<number, string>();
  for (let n = r.arrayHeader(what); n > 0; n--) {
    if (r.arrayHeader(what) !== 2) r.fail(what, "[rank, url] pairs");
    const rank = r.u32(`${what}.rank`);
    map.set(rank, r.str(`${what}.url`));
  }
  return map;
}
