/**
 * The selection API's booking answers for the OpenAPI document, in the DSL as `../responses.ts`
 * writes them (only `toJsonSchema()` is used); their wire form is `booking-wire.ts`'s.
 */
import { MAX_NAME_BYTES } from "../../../durable-objects/limits";
import { describe, node, optional } from "../schema";
import { array, object } from "../schema-composites";
import { float, string, u32, u64, uint } from "../schema-scalars";

const name = string({ minBytes: 1, maxBytes: MAX_NAME_BYTES });
const anyText = string({ minBytes: 0, maxBytes: 2 ** 20 });
const tokens = (what: string) => describe(uint(), what);
const i64 = node((v) => v, { type: "integer", minimum: -(2n ** 63n), maximum: 2n ** 63n - 1n });
const bool = node((v) => v as boolean, { type: "boolean" });

export const selectAnswer = object({
  selection_id: optional(describe(anyText, "Given or generated (`/select_and_reserve`: a UUID v4).")),
  sequence_hashes: optional(describe(array(i64), "Bookings only: the tracking hashes booked, as i64.")),
  isl_tokens: optional(describe(uint(), "Bookings only.")),
  track_prefill_tokens: optional(describe(bool, "Bookings only.")),
  model_name: name,
  routing_group: name,
  worker_id: u64(),
  dp_rank: u32(),
  endpoint: anyText,
  block_size: u32(),
  overlap: object({
    longest_matched: tokens("The most of the prompt any tier holds on any rank of the worker."),
    gpu: tokens("The longest device prefix among the worker's ranks."),
    dp: describe(
      node((v) => v, { type: "object", additionalProperties: { type: "integer", minimum: 0 } }),
      "Each rank's device prefix in tokens, keyed by the rank.",
    ),
    cpu: uint(),
    disk: uint(),
  }),
  effective_prefill_tokens: tokens("isl − min(cached, isl) on the chosen rank."),
  potential_decode_blocks: describe(uint(), "Blocks the rank would hold with the request admitted."),
  worker_load: optional(
    describe(
      object({
        active_prefill_tokens: uint(),
        prefill_token_capacity: describe(u64(), "max_num_batched_tokens (0 when not given)."),
        total_kv_blocks: optional(u64()),
      }),
      "Advisory selections only.",
    ),
  ),
});

export const reservationAnswer = object({
  selection_id: anyText,
  model_name: name,
  routing_group: name,
  worker_id: u64(),
  dp_rank: u32(),
  endpoint: anyText,
});

const potentialLoad = object({
  worker_id: u64(),
  dp_rank: u32(),
  potential_prefill_tokens: uint(),
  potential_decode_blocks: uint(),
  active_requests: uint(),
});

export const selectionPotentialLoadsAnswer = array(potentialLoad);

export const selectionLoadsAnswer = array(
  object({
    model_name: name,
    routing_group: name,
    loads: array(potentialLoad),
    pending_count: describe(uint(), "Always 0: no queue is offered."),
    pending_isl_tokens: describe(uint(), "Always 0: no queue is offered."),
  }),
);

export const overlapScoresAnswer = object({
  block_size: u32(),
  num_blocks: uint(),
  workers: array(
    object({
      worker_id: u64(),
      dp_rank: u32(),
      device_blocks: uint(),
      host_pinned_blocks: uint(),
      disk_blocks: uint(),
      host_pinned_extension_blocks: uint(),
      disk_extension_blocks: uint(),
      router_credit_blocks: float(),
    }),
  ),
  shared_cache: object({
    enabled: bool,
    total_hit_blocks: uint(),
    ranges: array(array(u32())),
  }),
});

export const dumpAnswer = describe(
  node((v) => v, { type: "object", additionalProperties: { type: "object" } }),
  '`{"<model>:<routing_group>": {"block_size", "events": [RouterEvent]}}`: per rank, Stored events of the blocks it holds.',
);
