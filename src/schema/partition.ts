/**
 * The partition field's two names. Dynamo's slot tracker called it `tenant_id`, and `routing_group`
 * from its PR #11471 on (reference §11.4), with no alias. A client of either generation must work
 * unchanged against one deployment (SPEC §3.1), so a request may use either name, and the route
 * layer answers in the request's own vocabulary: this module records which name that was.
 */
import type { Schema } from "./schema";
import type { Aliases, ObjectOf, ObjectSchema, Shape } from "./schema-composites";

export type PartitionField = "tenant_id" | "routing_group";

export const PARTITION_FIELDS: readonly PartitionField[] = ["tenant_id", "routing_group"];

/** Dynamo's first name for the partition, and what `PARTITION_FIELD` means when unset. */
export const DEFAULT_PARTITION_FIELD: PartitionField = "tenant_id";

/** What a tracker's request schema adds to its value: the name the request gave the partition. */
export interface PartitionNaming {
  /**
   * The one name that carried the partition's value. Undefined when neither did (the default
   * partition) or both did (agreeing; differing is refused): such a request speaks neither
   * generation, and its answers follow `PARTITION_FIELD`. A null value names nothing, as null reads
   * as absent everywhere in this API. Not a wire field: a body's own `partitionField` is ignored.
   */
  partitionField: PartitionField | undefined;
}

/** The name that carried the partition's value in a decoded body or query (see `PartitionNaming`). */
export function partitionFieldOf(value: object): PartitionField | undefined {
  const fields = value as Record<string, unknown>;
  const tenant = Object.hasOwn(fields, "tenant_id") && fields.tenant_id != null;
  const group = Object.hasOwn(fields, "routing_group") && fields.routing_group != null;
  if (tenant === group) return undefined;
  return tenant ? "tenant_id" : "routing_group";
}

/** An object schema whose value also records the partition's name. */
export type NamingSchema<S extends Shape, A extends Aliases<S>> = Schema<ObjectOf<S> & PartitionNaming> & {
  readonly shape: S;
  readonly aliases?: A;
};

/** `schema` (an object with `tenant_id` and its alias `routing_group`), recording which name was used. */
export function namingPartition<S extends Shape, A extends Aliases<S>>(
  schema: ObjectSchema<S, A>,
): NamingSchema<S, A> {
  return {
    ...schema,
    parse: (value, path) => {
      // The object schema refuses anything but a plain object before this reads it.
      const out = schema.parse(value, path) as ObjectOf<S> & PartitionNaming;
      out.partitionField = partitionFieldOf(value as object);
      return out;
    },
  };
}
