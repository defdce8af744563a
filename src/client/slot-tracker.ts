/**
 * The client itself: `hc<AppType>` knows every path, the body or query each route takes and the JSON
 * each answers, with the caller's token and replica on every call.
 */
import { hc } from "hono/client";
import type { AppType } from "../app";

/** As `http/replica.ts` names it; repeated so a frontend bundle takes nothing of the Worker's routing. */
const REPLICA_HEADER = "x-slot-tracker-replica";

export interface ClientOptions {
  /** Bearer token, when the service has `API_TOKENS`. */
  token?: string;
  /** Replica to read and write (one of `REPLICAS`); default: the one nearest the caller. */
  replica?: string;
  /** A fetch of your own (tests pass the Worker's). */
  fetch?: typeof fetch;
}

export function slotTrackerClient(baseUrl: string, options: ClientOptions = {}) {
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.replica !== undefined) headers[REPLICA_HEADER] = options.replica;
  return hc<AppType>(baseUrl, { headers, ...(options.fetch !== undefined && { fetch: options.fetch }) });
}

export type SlotTrackerClient = ReturnType<typeof slotTrackerClient>;
