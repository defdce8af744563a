/**
 * The request schemas of every route, in one module so the OpenAPI document can be generated from
 * exactly what the routes enforce. Field names are the wire's (snake_case, as Dynamo).
 */
import { PREFILL_BOOKING_SUFFIX } from "../../durable-objects/core/routing/route-request";
import {
  MAX_BATCH_OPS,
  MAX_HASHES_PER_CALL,
  MAX_LEASE_TTL_MS,
  MAX_NAME_BYTES,
  MAX_OWNER_BYTES,
  MAX_REQUEST_ID_BYTES,
  MAX_SESSION_ID_BYTES,
  MIN_LEASE_TTL_MS,
} from "../../durable-objects/limits";
import { namingPartition } from "./partition";
import { describe, invalid, node, optional, type Schema, withDefault } from "./schema";
import { array, hashes, object, type Shape, tagged } from "./schema-composites";
import { decimalU64, enumOf, float, intIn, string, U32_MAX, u32, u64, uint } from "./schema-scalars";

const name = string({ minBytes: 1, maxBytes: MAX_NAME_BYTES });
const requestId = string({ minBytes: 1, maxBytes: MAX_REQUEST_ID_BYTES });
const sequenceHashes = hashes({ maxItems: MAX_HASHES_PER_CALL });
const newIslTokens = withDefault(uint(), 0);
/** A frontend instance's id (SPEC §8): the lease that owns a booking. */
export const leaseOwner = string({ minBytes: 1, maxBytes: MAX_OWNER_BYTES });
const owner = optional(
  describe(leaseOwner, "The frontend whose live lease owns the booking (`POST /leases`); 404 without one."),
);
/** How long a lease lives from its renewal, ms. */
export const leaseTtlMs = intIn(MIN_LEASE_TTL_MS, MAX_LEASE_TTL_MS);

const tracker = { model_name: name, tenant_id: withDefault(name, "default") };
/** Dynamo later renamed `tenant_id` to `routing_group` (`partition.ts`); both spellings are accepted. */
const TENANT_ALIAS = { aliases: { routing_group: "tenant_id" } } as const;

/**
 * A body or query about one tracker: either name of the partition (both only when they agree), and
 * which one the request used, so that its error texts name the partition as it did.
 */
function trackerObject<S extends Shape & typeof tracker>(shape: S) {
  return namingPartition(object(shape, TENANT_ALIAS));
}

/**
 * A worker's routing advertisement. A card that cannot be read is refused here, naming the field,
 * rather than stored and silently ignored when the worker set's routing is resolved.
 */
export const routerCard = object({
  router_mode: enumOf(["kv", "round_robin", "random"]),
  overlap_score_weight: optional(float({ min: 0 })),
  router_temperature: optional(float({ min: 0 })),
  session_affinity_ttl_secs: optional(u32()),
});

const INCARNATION =
  "Which life of the worker this is (u64; absent reads as 0). A higher one than the registered worker's replaces it in one step and drops its live requests; an equal, lower or absent one is the duplicate 409.";

export const registerBody = trackerObject({
  worker_id: u64(),
  ...tracker,
  block_size: u32(),
  dp_start: u32(),
  dp_size: u32(),
  worker_type: optional(enumOf(["decode", "prefill"])),
  router_config: optional(routerCard),
  incarnation: optional(describe(u64(), INCARNATION)),
});

export const unregisterBody = trackerObject({ worker_id: u64(), ...tracker });

/** `/add`'s own fields (also an `add` op of `/batch`). */
export const addFields = {
  request_id: requestId,
  worker_id: u64(),
  dp_rank: u32(),
  sequence_hashes: sequenceHashes,
  new_isl_tokens: newIslTokens,
  expected_output_tokens: optional(u32()),
  expected_prefill_duration_ms: optional(float({ min: 0 })),
  owner,
};

export const addBody = trackerObject({ ...tracker, ...addFields });

/** `/prefill_complete` and `/free`. */
export const requestIdBody = trackerObject({ ...tracker, request_id: requestId });

/** `POST /batch`: lifecycle ops, each with its route's fields but the tracker's, applied in order. */
export const batchBody = trackerObject({
  ...tracker,
  ops: array(
    tagged("op", {
      add: object(addFields),
      prefill_complete: object({ request_id: requestId }),
      free: object({ request_id: requestId }),
    }),
    { maxItems: MAX_BATCH_OPS },
  ),
});

export const potentialLoadsBody = trackerObject({
  ...tracker,
  sequence_hashes: sequenceHashes,
  new_isl_tokens: newIslTokens,
});

/** `GET /workers` and `GET /loads`: each filter optional. */
export const listingQuery = namingPartition(
  object({ model_name: optional(name), tenant_id: optional(name) }, TENANT_ALIAS),
);

/** A u64 in a query string: decimal digits, as Rust's `u64::from_str` reads them (a leading `+` too). */
function queryU64(): Schema<bigint> {
  return node(
    (value, path) => {
      const id = typeof value === "string" ? decimalU64(value) : undefined;
      return id ?? invalid(path, "an unsigned 64-bit integer");
    },
    { type: "string", pattern: "^\\+?[0-9]+$", description: "decimal u64" },
  );
}

/** A u32 in a query string, decimal. */
function queryU32(): Schema<number> {
  return node(
    (value, path) => {
      const n = typeof value === "string" && /^\+?[0-9]{1,10}$/.test(value) ? Number(value) : Number.NaN;
      return n <= U32_MAX ? n : invalid(path, "an unsigned 32-bit integer");
    },
    { type: "string", pattern: "^\\+?[0-9]+$", description: "decimal u32" },
  );
}

/**
 * `POST /kv_events` (and `/selection/kv_events`): the tracker and the (worker, rank) whose engine
 * publishes the body's batches; without `dp_rank`, the batches' own `data_parallel_rank`, else 0.
 */
export const kvEventsQuery = trackerObject({
  ...tracker,
  worker_id: queryU64(),
  dp_rank: optional(queryU32()),
});

/** Routes about one tracker read from the query string (`GET /replica_sync/peers`). */
export const trackerQuery = trackerObject(tracker);

/** `POST /route`. The id leaves room for the prefill booking's suffix, which must still fit `/free`. */
export const routeBody = trackerObject({
  ...tracker,
  request_id: string({ minBytes: 1, maxBytes: MAX_REQUEST_ID_BYTES - PREFILL_BOOKING_SUFFIX.length }),
  sequence_hashes: sequenceHashes,
  new_isl_tokens: newIslTokens,
  expected_output_tokens: optional(u32()),
  session_id: optional(string({ minBytes: 1, maxBytes: MAX_SESSION_ID_BYTES })),
  owner,
  router_config_override: optional(
    object({
      overlap_score_weight: optional(float({ min: 0 })),
      router_temperature: optional(float({ min: 0 })),
    }),
  ),
});

/** `POST /leases`: create or renew `owner`'s lease for `ttl_ms`. */
export const leaseBody = trackerObject({ ...tracker, owner: leaseOwner, ttl_ms: leaseTtlMs });
