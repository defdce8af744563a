/**
 * What a request learns about itself on the way through, kept on the Hono context: who is calling
 * (set by `authenticate` before any route) and which tracker it named (set once the route parsed
 * it), for the tenant checks and the access log.
 */
import type { Context } from "hono";
import type { TrackerKey } from "../../durable-objects/types";
import type { AppEnv } from "../env";
import type { Grant } from "./api-tokens";

export interface RequestVars {
  /** The caller's grant: its token's, or every tenant when the API runs open. */
  principal: Grant;
  model?: string;
  tenant?: string;
  replica?: string;
}

/** Records the tracker (or listing filter) a request is about, for the access log. */
export function noteTarget(c: Context<AppEnv>, target: Partial<TrackerKey>): void {
  if (target.model !== undefined) c.set("model", target.model);
  if (target.tenant !== undefined) c.set("tenant", target.tenant);
  if (target.replica !== undefined) c.set("replica", target.replica);
}
