import type { DirectoryRpc, TrackerRpc } from "../durable-objects/rpc";
import type { Grant } from "./auth/api-tokens";
import type { PartitionField } from "./schema/partition";

/**
 * The Worker's bindings (wrangler.toml). The namespaces are typed by the RPC contract rather than by
 * the object classes, so the Worker depends only on the contract in `durable-objects/rpc.ts`.
 */
export interface Env {
  /** One object per (replica, model, tenant), named by `trackerName`. */
  TRACKER: DurableObjectNamespace<TrackerRpc & Rpc.DurableObjectBranded>;
  /** One object per replica listing that replica's trackers, named by `directoryName`. */
  DIRECTORY: DurableObjectNamespace<DirectoryRpc & Rpc.DurableObjectBranded>;
  /** Seconds after which a live request expires (read by the objects; default 300). */
  REQUEST_EXPIRY_SECONDS: string;
  /** Comma-separated replica names; default `"primary"`. */
  REPLICAS: string;
  /**
   * The partition's name in `/workers` and `/loads` rows, and in the error texts of requests that
   * named it neither way: `"tenant_id"` (default; Dynamo's first generation) or `"routing_group"`
   * (its second). Any other value means the default (`http/partition.ts`).
   */
  PARTITION_FIELD?: string;
  /** Which requests get an access-log line: `errors` (default), `all` or `off` (`http/access-log.ts`). */
  ACCESS_LOG?: string;
  /** "1" lets `/route` take the `x-slot-tracker-seed` header (tests only; never set in production). */
  ALLOW_TEST_SEED?: string;
  /**
   * Secret: JSON map from bearer token to its grant (`auth/api-tokens.ts`). Unset, the API is open.
   * Set it with `wrangler secret put API_TOKENS`, never in wrangler.toml.
   */
  API_TOKENS?: string;
}

/**
 * What a request learns about itself on the way through, kept on the Hono context: who is calling
 * (set by `authenticate` before any route) and which tracker it named (set once the route parsed
 * it), for the tenant checks, the error texts and the access log.
 */
export interface RequestVars {
  /** The caller's grant: its token's, or every tenant when the API runs open. */
  principal: Grant;
  model?: string;
  tenant?: string;
  replica?: string;
  /** The name the request gave its tracker's partition, when it gave exactly one (its error texts use it). */
  partitionField?: PartitionField;
}

export type AppEnv = { Bindings: Env; Variables: RequestVars };
