/**
 * Unfiltered listings (`GET /workers`, `GET /loads` without both filters): ask the serving
 * replica's directory which trackers exist, then every tracker for its rows, bounded in parallel.
 */
import type { TrackerKey } from "../../durable-objects/types";
import type { Env } from "../env";
import { mapBounded } from "./fan-out";
import { directoryStub } from "./stubs";

export interface ListingFilter {
  model_name: string | undefined;
  tenant_id: string | undefined;
}

/** The trackers a listing covers: exactly one when model and tenant are both given. */
export async function trackersToList(
  env: Env,
  replica: string,
  filter: ListingFilter,
): Promise<TrackerKey[]> {
  const { model_name: model, tenant_id: tenant } = filter;
  if (model !== undefined && tenant !== undefined) return [{ replica, model, tenant }];
  const directory = directoryStub(env, replica);
  const listed = await (model === undefined ? directory.listTrackers() : directory.listTrackers(model));
  return listed
    .filter((entry) => tenant === undefined || entry.tenant === tenant)
    .map((entry) => ({ replica, model: entry.model, tenant: entry.tenant }));
}

/** The rows of every tracker in `keys`, concatenated in key order. */
export async function rowsOf<R>(
  keys: readonly TrackerKey[],
  rows: (key: TrackerKey) => Promise<R[]>,
): Promise<R[]> {
  return (await mapBounded(keys, rows)).flat();
}
