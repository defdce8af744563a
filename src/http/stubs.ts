/**
 * Stubs for the objects a request talks to. Created per request: a stub that saw an exception may
 * be broken, and the namespace lookup is cheap, so nothing is cached across requests. Their
 * idempotent methods retry what the platform marks retryable, each attempt on a new stub (`retry.ts`).
 */
import type { Context } from "hono";
import { directoryName, trackerName } from "../../durable-objects/naming";
import type { DirectoryRpc, TrackerRpc } from "../../durable-objects/rpc";
import type { TrackerKey } from "../../durable-objects/types";
import { authorize } from "../auth/auth";
import type { AppEnv, Env } from "../env";
import type { PartitionNaming } from "../schema/partition";
import { locationHintOf, replicaOf } from "./replica";
import { noteTarget } from "./request-vars";
import { IDEMPOTENT_DIRECTORY_METHODS, IDEMPOTENT_TRACKER_METHODS, retryingStub } from "./retry";

export type TrackerStub = DurableObjectStub<TrackerRpc & Rpc.DurableObjectBranded>;
export type DirectoryStub = DurableObjectStub<DirectoryRpc & Rpc.DurableObjectBranded>;

/** The tracker object of (model, tenant) in `key.replica`, placed near that replica's region. */
export function trackerStub(env: Env, key: TrackerKey): TrackerStub {
  const name = trackerName(key);
  const locationHint = locationHintOf(key.replica);
  return retryingStub(() => env.TRACKER.getByName(name, { locationHint }), IDEMPOTENT_TRACKER_METHODS);
}

/** The directory object of `replica`, listing that replica's trackers. */
export function directoryStub(env: Env, replica: string): DirectoryStub {
  const name = directoryName(replica);
  const locationHint = locationHintOf(replica);
  return retryingStub(() => env.DIRECTORY.getByName(name, { locationHint }), IDEMPOTENT_DIRECTORY_METHODS);
}

/**
 * The tracker a body or query names, in the replica serving this request. Every route about one
 * tracker comes through here, so this is where its tenant is checked against the caller's token,
 * and where the request's name for the partition is noted for its error texts (`partition.ts`).
 */
export function trackerFor(
  c: Context<AppEnv>,
  target: { model_name: string; tenant_id: string } & Partial<PartitionNaming>,
): TrackerStub {
  authorize(c, target.tenant_id);
  const key = { replica: replicaOf(c), model: target.model_name, tenant: target.tenant_id };
  noteTarget(c, key);
  if (target.partitionField !== undefined) c.set("partitionField", target.partitionField);
  return trackerStub(c.env, key);
}
