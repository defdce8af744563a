/**
 * The trackers a listing shows (`GET /workers`, `GET /loads`, `GET /metrics`): those the filter
 * selects, in the serving replica, that the caller's token may see. A filter naming a tenant outside
 * the token's scope is refused (403) rather than answered with an empty list, so a misconfigured
 * client learns why it sees nothing.
 */
import type { Context } from "hono";
import type { TrackerKey } from "../../durable-objects/types";
import type { AppEnv } from "../env";
import { authorize, mayAccess } from "../auth/auth";
import { type ListingFilter, trackersToList } from "./listing";
import { noteTarget } from "./request-vars";

export async function visibleTrackers(
  c: Context<AppEnv>,
  filter: ListingFilter,
  replica: string,
): Promise<TrackerKey[]> {
  if (filter.tenant_id !== undefined) authorize(c, filter.tenant_id);
  noteTarget(c, { model: filter.model_name, tenant: filter.tenant_id, replica });
  const keys = await trackersToList(c.env, replica, filter);
  return keys.filter((key) => mayAccess(c, key.tenant));
}
