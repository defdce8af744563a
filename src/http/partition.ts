/**
 * The partition's name in answers (SPEC §3.1). `/workers` and `/loads` rows name it as the var
 * `PARTITION_FIELD` says, since a listing is shared by clients of both generations and they compare
 * rows exactly. An error text names it as the request did (`tenant={t}` for `tenant_id`,
 * `routing_group={g}` for `routing_group`), and as `PARTITION_FIELD` says when the request named
 * neither or both. The objects word every text in the first generation's words; this module renames.
 */
import type { Context } from "hono";
import { TRACKER_NAMING_CODES, text, trackerPhrase } from "../../durable-objects/core/messages";
import type { BatchOpResult, ErrorCode } from "../../durable-objects/types";
import type { AppEnv, Env } from "../env";
import { DEFAULT_PARTITION_FIELD, PARTITION_FIELDS, type PartitionField } from "../schema/partition";

/** The value last warned about, so that a misconfigured isolate logs it once, not per request. */
let warnedAbout: string | undefined;

/** `PARTITION_FIELD`; unset or not one of the two names, the default (`tenant_id`), as other vars fall back. */
export function configuredPartitionField(env: Pick<Env, "PARTITION_FIELD">): PartitionField {
  const raw = env.PARTITION_FIELD;
  if (raw === undefined) return DEFAULT_PARTITION_FIELD;
  if ((PARTITION_FIELDS as readonly string[]).includes(raw)) return raw as PartitionField;
  if (warnedAbout !== raw) {
    warnedAbout = raw;
    console.error(
      JSON.stringify({
        level: "error",
        msg: `PARTITION_FIELD must be "tenant_id" or "routing_group", not ${JSON.stringify(raw)}: answering with "${DEFAULT_PARTITION_FIELD}"`,
      }),
    );
  }
  return DEFAULT_PARTITION_FIELD;
}

/** The partition's name in this request's error texts: the one it used, else `PARTITION_FIELD`'s. */
export function textPartitionField(c: Context<AppEnv>): PartitionField {
  return c.get("partitionField") ?? configuredPartitionField(c.env);
}

/** A tracker as the second generation's texts name it. */
function secondGenerationPhrase(model: string, tenant: string): string {
  return `model=${model} routing_group=${tenant}`;
}

/**
 * The text of a failure `code` of tracker (model, tenant), with its partition named as `field`
 * names it. Exact: only texts of `TRACKER_NAMING_CODES` are touched, and in those the first
 * occurrence of the tracker's phrase is the text's own (nothing a client chose comes before it), so
 * a model, tenant or request id that happens to contain `tenant=` is never rewritten.
 */
export function renamePartition(
  message: string,
  code: ErrorCode,
  tracker: { model: string; tenant: string },
  field: PartitionField,
): string {
  if (field === "tenant_id" || !TRACKER_NAMING_CODES.has(code)) return message;
  const phrase = trackerPhrase(tracker.model, tracker.tenant);
  const at = message.indexOf(phrase);
  if (at < 0) return message;
  const renamed = secondGenerationPhrase(tracker.model, tracker.tenant);
  return message.slice(0, at) + renamed + message.slice(at + phrase.length);
}

/**
 * `/batch`'s per-op results with the partition named as `field` names it. Results carry no code, but
 * the only texts of a lifecycle op that name the tracker are "no slot tracker", matched whole, and
 * an owned add's "no live lease", matched by its own opening (the owner, the client's text, follows).
 */
export function renameBatchResults<R extends Pick<BatchOpResult, "error">>(
  results: R[],
  tracker: { model: string; tenant: string },
  field: PartitionField,
): R[] {
  if (field === "tenant_id") return results;
  const missing = text.trackerNotFound(tracker.model, tracker.tenant);
  const renamed = renamePartition(missing, "tracker_not_found", tracker, field);
  const noLease = text.leaseNotFound(tracker.model, tracker.tenant, "");
  const leaseOpening = noLease.slice(0, noLease.length - '""'.length);
  const leaseRenamed = renamePartition(leaseOpening, "lease_not_found", tracker, field);
  for (const result of results) {
    if (result.error === missing) result.error = renamed;
    else if (result.error?.startsWith(leaseOpening))
      result.error = leaseRenamed + result.error.slice(leaseOpening.length);
  }
  return results;
}

/** A listing row's partition entry: one key, never both (clients compare rows exactly). */
export type PartitionEntry = { tenant_id: string } | { routing_group: string };

/** The partition entry of a row, under `field`; spread in place, so the row keeps Dynamo's key order. */
export function partitionEntry(field: PartitionField, tenant: string): PartitionEntry {
  return field === "routing_group" ? { routing_group: tenant } : { tenant_id: tenant };
}
