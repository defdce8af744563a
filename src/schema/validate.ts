/**
 * Request validation as Hono middleware, so each route's input type reaches `hono/client`: a typed
 * client knows what `/register` takes from the same schema the route enforces. The decoded value is
 * stored under Hono's `json` target whichever encoding the body came in (JSON or MessagePack).
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { type FastMsgpack, readBody } from "../wire/body";
import type { Infer, Schema } from "./schema";
import type { QueryInput, WireInput } from "../wire/wire-types";

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

/** Validates the query string against `schema`; the handler takes it with `c.req.valid("query")`. */
export function validQuery<S extends Schema<unknown>>(
  schema: S,
): MiddlewareHandler<AppEnv, string, { in: { query: QueryInput<S> }; out: { query: Infer<S> } }> {
  return async (c, next) => {
    c.req.addValidatedData("query", schema.parse(c.req.query(), "") as object);
    await next();
  };
}
