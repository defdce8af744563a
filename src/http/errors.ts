/**
 * The one place where failures become HTTP: the tracker's error codes, body and validation errors,
 * and anything unexpected. Handlers throw; `onError` answers.
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { STATUS_OF_CODE } from "../../durable-objects/status";
import type { ErrorCode, Failure, Result } from "../../durable-objects/types";
import type { AppEnv } from "../env";
import { SchemaError, type SchemaErrorKind } from "../schema/schema";
import { JsonSyntaxError } from "../wire/json";
import { send } from "../wire/respond";
import { renamePartition, textPartitionField } from "./partition";
import { isRetryable } from "./retry";

/** The status of every tracker error code; one table, shared with `/batch`'s per-op results. */
export { STATUS_OF_CODE };

const STATUS_OF_SCHEMA_ERROR = {
  invalid: 422,
  too_large: 413,
  conflict: 400,
} as const satisfies Record<SchemaErrorKind, ContentfulStatusCode>;

/** An error whose message is safe and meant for the client. */
export class HttpError extends Error {
  override readonly name = "HttpError";
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    /** The tracker's code, when the text is the object's (its partition is renamed on the way out). */
    readonly code?: ErrorCode,
  ) {
    super(message);
  }
}

export function httpErrorOf(failure: Pick<Failure, "code" | "message">): HttpError {
  // A code added by a newer object version (mid-deploy) is still the client's problem, not ours.
  const status: ContentfulStatusCode = STATUS_OF_CODE[failure.code] ?? 400;
  return new HttpError(status, failure.message, failure.code);
}

/**
 * The client's text of `err`. A tracker's text names the partition as the request did: the tracker
 * is the one the request named (`trackerFor` noted it), the only tracker a failing route talks to.
 */
function textOf(err: HttpError, c: Context<AppEnv>): string {
  const model = c.get("model");
  const tenant = c.get("tenant");
  if (err.code === undefined || model === undefined || tenant === undefined) return err.message;
  return renamePartition(err.message, err.code, { model, tenant }, textPartitionField(c));
}

/**
 * The success branch of an RPC `Result`, or its failure thrown as the mapped HTTP error. Generic over
 * the stub's return type, which is the declared `Result` intersected with RPC's `Disposable`.
 */
export function unwrap<R extends Result>(result: R): Extract<R, { ok: true }> {
  const outcome: Result = result;
  if (!outcome.ok) throw httpErrorOf(outcome);
  return result as Extract<R, { ok: true }>;
}

/** Durable Object errors the platform marks as overload: the caller should back off and retry. */
function isOverloaded(err: unknown): boolean {
  return typeof err === "object" && err !== null && "overloaded" in err && err.overloaded === true;
}

export function onError(err: unknown, c: Context<AppEnv>): Response {
  if (err instanceof HttpError) return send(c, { error: textOf(err, c) }, err.status);
  if (err instanceof SchemaError) return send(c, { error: err.message }, STATUS_OF_SCHEMA_ERROR[err.kind]);
  if (err instanceof JsonSyntaxError) return send(c, { error: err.message }, 400);
  const error = err instanceof Error ? err : new Error(String(err));
  // One JSON line for Workers Logs; never the body, which may carry prompt hashes.
  console.error(
    JSON.stringify({
      level: "error",
      msg: "unhandled error",
      method: c.req.method,
      path: c.req.path,
      error: `${error.name}: ${error.message}`,
      stack: error.stack,
    }),
  );
  if (isOverloaded(err))
    return send(c, { error: "tracker overloaded; retry later" }, 503, { "retry-after": "1" });
  // A transient failure (an object reset, a lost connection) that retries did not get past, or that
  // hit a call which is not retried because it may have run (`retry.ts`).
  if (isRetryable(err))
    return send(c, { error: "tracker temporarily unavailable; retry later" }, 503, { "retry-after": "1" });
  return send(c, { error: "internal error" }, 500);
}
