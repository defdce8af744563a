import type { Context } from "hono";
import type { TrackerKey } from "../../durable-objects/types";
import type { AppEnv } from "../env";

/** Records the tracker (or listing filter) a request is about, for the access log. */
export function noteTarget(c: Context<AppEnv>, target: Partial<TrackerKey>): void {
  if (target.model !== undefined) c.set("model", target.model);
  if (target.tenant !== undefined) c.set("tenant", target.tenant);
  if (target.replica !== undefined) c.set("replica", target.replica);
}
