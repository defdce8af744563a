/**
 * The selection API's booking requests (reference selection §1.2): `SelectRequest`,
 * `SelectAndReserveRequest`, `ReservationRequest`, `OutputBlockRequest` and the prompt queries of
 * `/potential_loads` and `/overlap_scores`, in Dynamo's fields and defaults, refused in serde's words
 * (422 behind axum's sentence); and what each becomes in the object's vocabulary. Unknown fields are
 * ignored, as serde does without `deny_unknown_fields`.
 *
 * Fields of Dynamo's queueing, policy classes and session affinity (`priority_jump`,
 * `strict_priority`, `session_id`, `session_context`, `affinity_target`) are read and have no effect:
 * this service offers no queue and no session affinity on the selection API.
 */
import { DEFAULT_PARTITION_NAME } from "../../../durable-objects/core/catalog/catalog-record";
import {
  parseRouterConfigOverride,
  type RouterConfigOverride,
} from "../../../durable-objects/core/routing/router-config-override";
import { MAX_NAME_BYTES, MAX_OWNER_BYTES, MAX_REQUEST_ID_BYTES } from "../../../durable-objects/limits";
import type { SelectionConstraints } from "../../../durable-objects/selection-types";
import { describe, type Infer, node, optional, type Schema } from "../schema";
import { promptFields, serdeAny, serdeF64, serdeSeq, serdeUsize } from "./serde-prompt";
import {
  axumJsonBody,
  serdeBool,
  serdeDefault,
  serdeEnum,
  serdeF32,
  serdeString,
  serdeStruct,
  serdeU32,
  serdeU64,
} from "./serde-schemas";
import { serdeError } from "./serde-text";

const name = serdeString({ minBytes: 1, maxBytes: MAX_NAME_BYTES });
/** A selection id is the booking's request id, so it has a request id's bounds. */
export const selectionId = serdeString({ minBytes: 1, maxBytes: MAX_REQUEST_ID_BYTES });
const text = serdeString({ minBytes: 0, maxBytes: MAX_NAME_BYTES });

/** `router_config_override`: Dynamo's `try_from` and `validate()` texts, at the field's path. */
const routerConfigOverride: Schema<RouterConfigOverride | undefined> = node(
  (value, path) => {
    const parsed = parseRouterConfigOverride(value);
    return parsed.ok ? parsed.value : serdeError(path, parsed.message);
  },
  {
    type: "object",
    description:
      "Per-request tuning: overlap_score_credit, prefill_load_scale, router_temperature, assume_kv_reuse, track_prefill_tokens, shared_cache_multiplier (and the deprecated overlap_score_weight).",
  },
  true,
);

/** The partition of a body, Dynamo's defaults for both names. */
export const partition = {
  model_name: serdeDefault(name, DEFAULT_PARTITION_NAME),
  routing_group: serdeDefault(name, DEFAULT_PARTITION_NAME),
};

/** A frontend instance's id (SPEC §8): the lease that owns a booking. */
export const selectionLeaseOwner = serdeString({ minBytes: 1, maxBytes: MAX_OWNER_BYTES });
/** Not Dynamo's: a booking's lease owner (SPEC §8); absent, the booking is Dynamo's exactly. */
const owner = optional(
  describe(selectionLeaseOwner, "The frontend whose live lease owns the booking (`POST /selection/leases`)."),
);

const EMPTY_PREFERENCES: Readonly<Record<string, number>> = Object.freeze(Object.create(null));
const preferredTaints: Schema<Readonly<Record<string, number>>> = node(
  (value, path) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return serdeError(path, "invalid type: expected a map");
    }
    const out: Record<string, number> = Object.create(null);
    const weight = serdeF32();
    for (const [taint, raw] of Object.entries(value)) out[taint] = weight.parse(raw, `${path}.${taint}`);
    return out;
  },
  { type: "object", additionalProperties: { type: "number", format: "float" } },
);

const selectionFields = {
  ...partition,
  selection_id: optional(selectionId),
  ...promptFields,
  router_config_override: routerConfigOverride,
  expected_output_tokens: optional(serdeU32()),
  priority_jump: optional(describe(serdeF64(), "Queue priority; no effect (no queue is offered).")),
  strict_priority: optional(describe(serdeU32(), "Queue priority; no effect (no queue is offered).")),
  session_id: optional(describe(text, "No effect: the selection API offers no session affinity here.")),
  session_context: optional(
    serdeStruct("SessionContext", {
      session_id: text,
      parent_session_id: optional(text),
      session_final: optional(serdeBool()),
      input_trigger: optional(serdeEnum(["user_message", "tool_result", "other"])),
    }),
  ),
  affinity_target: optional(serdeAny("No effect: the selection API offers no session affinity here.")),
  pinned_worker: optional(
    describe(
      serdeStruct("PinnedWorker", { worker_id: serdeU64(), dp_rank: serdeU32() }),
      "Scored alone, without a draw.",
    ),
  ),
  allowed_worker_ids: optional(describe(serdeSeq(serdeU64()), "Only these workers are eligible.")),
  routing_constraints: serdeDefault(
    serdeStruct("RoutingConstraints", {
      required_taints: serdeDefault(serdeSeq(text), []),
      preferred_taints: serdeDefault(preferredTaints, EMPTY_PREFERENCES),
    }),
    { required_taints: [], preferred_taints: EMPTY_PREFERENCES },
  ),
};

export const selectBody = axumJsonBody(
  serdeStruct("SelectRequest", {
    ...selectionFields,
    advisory: serdeDefault(
      describe(serdeBool(), "Skip admission and add the worker's load to the answer."),
      false,
    ),
  }),
);

export const selectAndReserveBody = axumJsonBody(
  serdeStruct("SelectAndReserveRequest", { ...selectionFields, owner }),
);

export const reservationBody = axumJsonBody(
  serdeStruct("ReservationRequest", {
    ...partition,
    selection_id: describe(selectionId, "The selection to replay, or the explicit booking's id."),
    worker_id: optional(describe(serdeU64(), "Present: the explicit form, booked on (worker_id, dp_rank).")),
    dp_rank: optional(serdeU32()),
    ...promptFields,
    router_config_override: routerConfigOverride,
    expected_output_tokens: optional(serdeU32()),
    effective_prefill_tokens: optional(
      describe(serdeUsize(), "Tokens to book as prefill load; at most the prompt's tokens."),
    ),
    track_prefill_tokens: optional(serdeBool()),
    owner,
  }),
);

export const outputBlockBody = axumJsonBody(
  serdeStruct("OutputBlockRequest", {
    decay_fraction: optional(describe(serdeF64(), "The block's weight, in [0, 1].")),
  }),
);

export const promptQueryBody = axumJsonBody(
  serdeStruct("PotentialLoadsRequest", {
    ...partition,
    ...promptFields,
    router_config_override: routerConfigOverride,
  }),
);

/** The choice constraints of a select body. */
export function constraintsOf(
  body: Pick<
    Infer<typeof selectBody>,
    "router_config_override" | "pinned_worker" | "allowed_worker_ids" | "routing_constraints"
  >,
): SelectionConstraints {
  const { pinned_worker: pinned, allowed_worker_ids: allowed, routing_constraints: routing } = body;
  const preferred = Object.keys(routing.preferred_taints).length > 0 ? routing.preferred_taints : undefined;
  return {
    ...(body.router_config_override !== undefined && { override: body.router_config_override }),
    ...(pinned && { pinned: { workerId: pinned.worker_id, dpRank: pinned.dp_rank } }),
    ...(allowed && { allowedWorkerIds: allowed }),
    ...(routing.required_taints.length > 0 && { requiredTaints: routing.required_taints }),
    ...(preferred && { preferredTaints: preferred }),
  };
}
