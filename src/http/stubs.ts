/**
 * Stubs for the objects a request talks to. Created per request: a stub that saw an exception may
 * be broken, and the namespace lookup is cheap, so nothing is cached across requests.
 */
import type { Context } from "hono";
import { directoryName, trackerName } from "../../durable-objects/naming";
import type { DirectoryRpc, TrackerKey, TrackerRpc } from "../../durable-objects/types";
import type { AppEnv, Env } from "../env";
import { locationHintOf, replicaOf } from "./replica";

export type TrackerStub = DurableObjectStub<TrackerRpc & Rpc.DurableObjectBranded>;
export type DirectoryStub = DurableObjectStub<DirectoryRpc & Rpc.DurableObjectBranded>;

/** The tracker object of (model, tenant) in `key.replica`, placed near that replica's region. */
export function trackerStub(env: Env, key: TrackerKey): TrackerStub {
  return env.TRACKER.getByName(trackerName(key), { locationHint: locationHintOf(key.replica) });
}

/** The directory object of `replica`, listing that replica's trackers. */
export function directoryStub(env: Env, replica: string): DirectoryStub {
  return env.DIRECTORY.getByName(directoryName(replica), { locationHint: locationHintOf(replica) });
}

/** The tracker a body or query names, in the replica serving this request. */
export function trackerFor(
  c: Context<AppEnv>,
  target: { model_name: string; tenant_id: string },
): TrackerStub {
  return trackerStub(c.env, { replica: replicaOf(c), model: target.model_name, tenant: target.tenant_id });
}
