/**
 * The answers' shapes, for the OpenAPI document, written with the request DSL so 64-bit fields carry
 * the same exact bounds as in the requests. Only `toJsonSchema()` is used: answers are built by the
 * routes, not parsed.
 */
import { MAX_BATCH_OPS } from "../../durable-objects/limits";
import { describe, type JsonSchema, node, optional, type Schema } from "./schema";
import { array, object } from "./schema-composites";
import { enumOf, float, string, u32, u64, uint } from "./schema-scalars";

const anyText = string({ minBytes: 0, maxBytes: 2 ** 20 });
const name = string({ minBytes: 1, maxBytes: 256 });
const count = (what: string) => describe(uint(), what);

/** `{"status":"ok"}`: every successful write. */
export const okAnswer = object({ status: enumOf(["ok"]) });

/** `{"error": "…"}`: every failure, with the exact text (Dynamo's wording where Dynamo has one). */
export const errorAnswer = object({ error: describe(anyText, "What is wrong, naming the field.") });

const routerCardAnswer = object({
  router_mode: enumOf(["kv", "round_robin", "random"]),
  overlap_score_weight: optional(float({ min: 0 })),
  router_temperature: optional(float({ min: 0 })),
  session_affinity_ttl_secs: optional(u32()),
});

/**
 * A listing row whose `tenant_id` is named as `PARTITION_FIELD` says: the row has `tenant_id` or, in
 * its place, `routing_group`, never both (SPEC §3.1).
 */
function keyedByPartition(row: Schema<unknown>): Schema<unknown> {
  const { properties, required, ...rest } = row.toJsonSchema() as {
    properties: Record<string, JsonSchema>;
    required: string[];
  };
  const keyed: Record<string, JsonSchema> = {};
  for (const [field, schema] of Object.entries(properties)) {
    if (field !== "tenant_id") {
      keyed[field] = schema;
      continue;
    }
    keyed.tenant_id = {
      ...schema,
      description: "The tracker's tenant (routing group); absent where `PARTITION_FIELD` is `routing_group`.",
    };
    keyed.routing_group = {
      ...schema,
      description:
        "In place of `tenant_id` where `PARTITION_FIELD` is `routing_group` (Dynamo's later name).",
    };
  }
  return node(row.parse, {
    ...rest,
    properties: keyed,
    required: required.filter((field) => field !== "tenant_id"),
    oneOf: [{ required: ["tenant_id"] }, { required: ["routing_group"] }],
  });
}

export const workersAnswer = array(
  keyedByPartition(
    object({
      worker_id: u64(),
      model_name: name,
      tenant_id: name,
      block_size: u32(),
      dp_start: u32(),
      dp_size: u32(),
      worker_type: optional(enumOf(["decode", "prefill"])),
      router_config: optional(routerCardAnswer),
      incarnation: optional(describe(u64(), "Only when given at registration.")),
    }),
  ),
);

export const loadsAnswer = array(
  keyedByPartition(
    object({
      model_name: name,
      tenant_id: name,
      worker_id: u64(),
      dp_rank: u32(),
      active_prefill_tokens: count(
        "Prompt tokens of live requests whose prefill has not completed (decayed).",
      ),
      active_decode_blocks: count("Distinct KV blocks over the prompts of the rank's live requests."),
    }),
  ),
);

export const potentialLoadsAnswer = array(
  object({
    worker_id: u64(),
    dp_rank: u32(),
    potential_prefill_tokens: count("active_prefill_tokens + new_isl_tokens."),
    potential_decode_blocks: count("active_decode_blocks + query blocks the rank does not already hold."),
    active_requests: count("Live requests on the rank."),
  }),
);

const cost = object({
  logit: describe(float(), "Dynamo's KV cost of the chosen rank; lower is better."),
  potential_prefill_tokens: describe(
    uint(),
    "active_prefill_tokens + new_isl_tokens − min(cached_blocks × block_size, new_isl_tokens).",
  ),
  potential_decode_blocks: uint(),
  overlap_blocks: count("Leading prompt blocks the rank's live requests already hold."),
  cached_blocks: count(
    "Leading prompt blocks the cache index credits the rank with: bookings within DYN_ROUTER_TTL_SECS, freed or not.",
  ),
});

export const routeAnswer = object({
  worker_id: u64(),
  dp_rank: u32(),
  cost,
  mode: enumOf(["kv", "round_robin", "random"]),
  prefill: optional(
    describe(
      object({
        worker_id: u64(),
        dp_rank: u32(),
        request_id: describe(name, "The prefill hop's booking: `<request_id>#prefill`; free it as well."),
        mode: enumOf(["kv", "round_robin", "random"]),
        cost,
      }),
      "Present when the tracker has prefill workers.",
    ),
  ),
});

export const peersAnswer = object({
  replica: describe(name, "The replica that answered."),
  peers: array(
    object({
      peer: name,
      state: enumOf(["ok", "backing_off", "resync"]),
      queued_events: count("Events accepted here that the peer has not acknowledged."),
      last_acked_seq: count("Highest sequence number of this replica's stream the peer acknowledged."),
      oldest_unacked_age_ms: count("Age of the oldest unacknowledged event, ms (0 when none)."),
      consecutive_failures: count("Consecutive failed sends."),
    }),
  ),
});

export const batchAnswer = object({
  results: describe(
    array(
      object({
        status: describe(u32(), "What the op's own route would have answered: 200, 201, 400, 404, 409, …"),
        error: optional(anyText),
      }),
      { maxItems: MAX_BATCH_OPS },
    ),
    "One result per op, in order.",
  ),
});

/** `POST /leases` (either API): the lease's deadline after this renewal. */
export const leaseAnswer = object({
  owner: name,
  expires_at_ms: describe(
    uint(),
    "Epoch ms until which the lease lives; a renewal never moves it earlier. Renew well before it (every ttl/3).",
  ),
});

/** `POST /kv_events` (either API): what the call did to its rank's sequence. */
export const kvEventsAnswer = object({
  applied: count("Batches of the body applied."),
  ignored: count("Batches acknowledged and ignored: their sequence numbers were applied before."),
  next_seq: count("The sequence number this rank's publisher is expected to send next."),
});

/** `GET /kv_events` (either API): each (worker, rank) publisher of the tracker, sorted by worker and rank. */
export const kvStreamsAnswer = array(
  object({
    worker_id: u64(),
    dp_rank: u32(),
    epoch: describe(anyText, "The sender's name for the publisher's current life (`x-kv-event-epoch`)."),
    next_seq: count("The sequence number expected next."),
    cached_blocks: count("Blocks the rank holds in its KV cache, every tier, as its events tell."),
    lag_ms: optional(
      describe(uint(), "Delay of the last batch applied here from its engine time; absent before one."),
    ),
  }),
);

/** `DELETE /leases/{owner}` (either API): the lease ended, and the bookings that ended with it. */
export const leaseEndAnswer = object({
  owner: name,
  freed: count("Bookings of the owner freed by the deletion, at once."),
});

/** `GET /leases` (either API): the tracker's live leases, sorted by owner (UTF-8 bytes). */
export const leasesAnswer = array(
  object({
    owner: name,
    expires_at_ms: describe(uint(), "Epoch ms until which the lease lives."),
    bookings: count("Live bookings the lease owns in the serving replica."),
  }),
);
