/**
 * The selection API's lease requests (SPEC §8; not Dynamo's): `POST /selection/leases` refused in
 * serde's words as the other selection bodies are, and the partition of the `DELETE` and `GET`
 * routes' query strings, defaulted as the bodies' are.
 */
import { DEFAULT_PARTITION_NAME } from "../../../durable-objects/core/catalog/catalog-record";
import { MAX_LEASE_TTL_MS, MAX_NAME_BYTES, MIN_LEASE_TTL_MS } from "../../../durable-objects/limits";
import { HttpError } from "../../http/errors";
import { describe, node, type Schema, SchemaError, withDefault } from "../schema";
import { object } from "../schema-composites";
import { string } from "../schema-scalars";
import { partition, selectionLeaseOwner } from "./booking";
import { axumJsonBody, serdeStruct } from "./serde-schemas";
import { integerOf, invalidType, invalidValue } from "./serde-text";

/** `ttl_ms`: a `u64` serde would read, then our range, said in serde's `invalid value` form. */
const ttlMs: Schema<number> = node(
  (value, path) => {
    const integer = integerOf(value);
    if (integer === undefined) return invalidType(path, value, "u64");
    if (integer < MIN_LEASE_TTL_MS || integer > MAX_LEASE_TTL_MS) {
      return invalidValue(path, value, `an integer from ${MIN_LEASE_TTL_MS} to ${MAX_LEASE_TTL_MS}`);
    }
    return Number(integer);
  },
  { type: "integer", minimum: MIN_LEASE_TTL_MS, maximum: MAX_LEASE_TTL_MS },
);

export const selectionLeaseBody = axumJsonBody(
  serdeStruct("LeaseRequest", {
    ...partition,
    owner: describe(selectionLeaseOwner, "The frontend instance's id."),
    ttl_ms: describe(ttlMs, "How long the lease lives from this renewal, ms."),
  }),
);

const name = string({ minBytes: 1, maxBytes: MAX_NAME_BYTES });

/** `DELETE /selection/leases/{owner}` and `GET /selection/leases`: the partition, Dynamo's defaults. */
export const selectionLeaseQuery = object({
  model_name: withDefault(name, DEFAULT_PARTITION_NAME),
  routing_group: withDefault(name, DEFAULT_PARTITION_NAME),
});

/** The `{owner}` path segment; a bad one is 400 with axum's `Path` rejection prefix. */
export function selectionOwnerParam(raw: string): string {
  try {
    return selectionLeaseOwner.parse(raw, "owner");
  } catch (err) {
    if (err instanceof SchemaError) throw new HttpError(400, `Invalid URL: ${err.message}`);
    throw err;
  }
}

/** A selection body's tracker, its texts in the second generation's words (`routing_group=`). */
export function leasePartition(p: { model_name: string; routing_group: string }) {
  return { model_name: p.model_name, tenant_id: p.routing_group, partitionField: "routing_group" as const };
}

/**
 * A selection booking's tracker: named as today without an owner (its texts unchanged), in the
 * second generation's words with one, so its "no live lease" text says `routing_group=`.
 */
export function bookingPartition(p: {
  model_name: string;
  routing_group: string;
  owner?: string | undefined;
}) {
  if (p.owner !== undefined) return leasePartition(p);
  return { model_name: p.model_name, tenant_id: p.routing_group };
}
