/**
 * Request validation as Hono middleware, so each route's input type reaches `hono/client`: a typed
 * client knows what `/register` takes from the same schema the route enforces. The decoded value is
 * stored under Hono's `json` target whichever encoding the body came in (JSON or MessagePack).
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { type FastMsgpack, readBody } from "../wire/body";
import type { QueryInput, WireInput } from "../wire/wire-types";
import type { Infer, Schema } from "./schema";

/**
 * Reads, decodes and validates the body against `schema` (MessagePack through `fast` first, if given);
 * the handler takes it with `c.req.valid("json")`.
 */
export function validBody<S extends Schema<unknown>>(
  schema: S,
  fast?: FastMsgpack<Infer<S>>,
): MiddlewareHandler<AppEnv, string, { in: { json: WireInput<S> }; out: { json: Infer<S> } }> {
  return async (c, next) => {
    c.req.addValidatedData("json", (await readBody(c, schema, fast)) as object);
    await next();
  };
}

/**
 * As {@link validBody}, but a request without a body (no content type, nothing sent) reads as `{}`:
 * for routes whose whole body is optional (`/selection/reservations/{id}/output_block`).
 */
export function validOptionalBody<S extends Schema<unknown>>(
  schema: S,
): MiddlewareHandler<AppEnv, string, { in: { json: WireInput<S> }; out: { json: Infer<S> } }> {
  return async (c, next) => {
    const empty =
      c.req.header("content-type") === undefined &&
      (c.req.raw.body === null || c.req.header("content-length") === "0");
    const body = empty ? schema.parse({}, "") : await readBody(c, schema);
    c.req.addValidatedData("json", body as object);
    await next();
  };
}

/** Validates the query string against `schema`; the handler takes it with `c.req.valid("query")`. */
export function validQuery<S extends Schema<unknown>>(
  schema: S,
): MiddlewareHandler<AppEnv, string, { in: { query: QueryInput<S> }; out: { query: Infer<S> } }> {
  return async (c, next) => {
    c.req.addValidatedData("query", schema.parse(c.req.query(), "") as object);
    await next();
  };
}
