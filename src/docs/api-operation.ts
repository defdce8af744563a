/**
 * How the OpenAPI document describes one route (`Operation`), and what every route of a kind can
 * answer besides its own statuses: body, query and auth failures (SPEC §6).
 */
import { MAX_BODY_BYTES } from "../../durable-objects/limits";
import { okAnswer } from "../schema/responses";
import type { Schema } from "../schema/schema";

/** Who may call: anyone, a token covering the tenant, or an `admin` token (when `API_TOKENS` is set). */
export type Access = "public" | "tenant" | "admin";

export interface Answer {
  description: string;
  /** The body's schema; absent for an empty body. */
  schema?: Schema<unknown>;
  /** Defaults to JSON (or MessagePack when `Accept` asks for it). */
  mediaType?: "text/plain" | "text/html";
  example?: unknown;
}

export interface Operation {
  method: "get" | "post" | "patch" | "delete";
  /** Hono's form: a `:name` segment is a path parameter. */
  path: string;
  tag: "Registry" | "Requests" | "Leases" | "Loads" | "Routing" | "Replication" | "Operations" | "Selection";
  summary: string;
  description: string;
  access: Access;
  body?: Schema<unknown>;
  query?: Schema<unknown>;
  /** What each `:name` segment of the path is. */
  pathParams?: Record<string, string>;
  /** Query parameters read outside the schema (text, optional). */
  extraQuery?: Record<string, string>;
  /** Optional request headers this route reads. */
  headers?: Record<string, string>;
  /** Request headers this route requires. */
  requiredHeaders?: Record<string, string>;
  /** A body that no schema describes, taken as it is (`POST /kv_events`: engines' MessagePack). */
  rawBody?: { mediaType: string; description: string };
  success: { status: number } & Answer;
  /** Route-specific failures: status → when. Body and auth failures are added for every route. */
  errors: Record<number, string>;
  example?: unknown;
}

export const ok = (status: 200 | 201, description: string) => ({
  status,
  description,
  schema: okAnswer,
  example: { status: "ok" },
});

export const REPLICA_HEADER = {
  "x-slot-tracker-replica":
    "Serve from this replica (one of `REPLICAS`); default: the replica nearest the caller.",
};

/** Failures any body-taking route can answer (SPEC §6). */
export const BODY_ERRORS: Record<number, string> = {
  400: "Malformed JSON or MessagePack, or a field and its alias disagree.",
  413: `Body over ${MAX_BODY_BYTES} bytes, or an array over its cap.`,
  415: "Content type other than application/json or application/msgpack.",
  422: "A missing or mistyped field; the error names it.",
};

/** Failures any query-taking route can answer. */
export const QUERY_ERRORS: Record<number, string> = {
  400: "A field and its alias disagree, or an unknown replica was named.",
  422: "A mistyped query field; the error names it.",
};

export const AUTH_ERRORS: Record<Exclude<Access, "public">, Record<number, string>> = {
  tenant: {
    401: "`API_TOKENS` is set and the bearer token is missing or unknown.",
    403: "The token does not cover this tenant.",
  },
  admin: {
    401: "`API_TOKENS` is set and the bearer token is missing or unknown.",
    403: "The route needs an `admin` token.",
  },
};
