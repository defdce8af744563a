/**
 * The catalog's answers for the OpenAPI document, written with the DSL as `../responses.ts` does
 * (only `toJsonSchema()` is used): the record of `catalog-wire.ts`, and `/ready`'s body. A field
 * Dynamo writes as `null` when absent is nullable; one it leaves out is optional.
 */
import { MAX_NAME_BYTES } from "../../../durable-objects/limits";
import { describe, node, optional, type Schema } from "../schema";
import { array, object } from "../schema-composites";
import { enumOf, float, string, u32, u64, uint } from "../schema-scalars";

const anyText = string({ minBytes: 0, maxBytes: 2 ** 20 });
const name = string({ minBytes: 1, maxBytes: MAX_NAME_BYTES });
const textMap = node(() => ({}), { type: "object", additionalProperties: { type: "string" } });

function nullable<T>(schema: Schema<T>): Schema<T | null> {
  return node(schema.parse, { anyOf: [schema.toJsonSchema(), { type: "null" }] });
}

export const catalogRecordAnswer = object({
  worker_id: u64(),
  model_name: name,
  routing_group: name,
  lifecycle: enumOf(["incomplete", "schedulable", "draining", "unschedulable"]),
  endpoint: nullable(anyText),
  kv_events_endpoint: nullable(anyText),
  kv_events_endpoints: optional(describe(textMap, "Per DP rank; left out when empty.")),
  replay_endpoint: nullable(anyText),
  block_size: nullable(u32()),
  data_parallel_start_rank: nullable(describe(u32(), "As posted: null when not given (scheduled as 0).")),
  data_parallel_size: nullable(describe(u32(), "As posted: null when not given (scheduled as 1).")),
  max_num_batched_tokens: nullable(u64()),
  total_kv_blocks: nullable(u64()),
  stable_routing_id: nullable(anyText),
  is_eagle: nullable(node((v) => v as boolean, { type: "boolean" })),
  taints: array(anyText),
  topology_domains: textMap,
  kv_transfer_domain: nullable(anyText),
  kv_transfer_enforcement: nullable(enumOf(["required", "preferred"])),
  kv_transfer_preferred_weight: nullable(float()),
  router_hint_worker_type: optional(describe(anyText, "Left out when none.")),
  router_hint_source_control_endpoints: optional(describe(textMap, "Per DP rank; left out when empty.")),
  kv_event_source_mode: optional(describe(anyText, "Left out when none.")),
  not_schedulable_reasons: optional(
    describe(array(anyText), "Why the worker is `incomplete`, in Dynamo's order; left out when none."),
  ),
  incarnation: optional(describe(u64(), "Ours: the record's incarnation; left out when none.")),
});

export const catalogListAnswer = array(catalogRecordAnswer);

export const readyAnswer = object({
  ready: describe(
    node((v) => v as boolean, { type: "boolean" }),
    "200 when true, 503 when false.",
  ),
  schedulable_workers: describe(uint(), "Schedulable workers across every partition."),
  workers: catalogListAnswer,
});
