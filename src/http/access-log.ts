/**
 * One JSON line per request for Workers Logs, which indexes its fields: route, method, status, the
 * tracker the request named (once its route parsed it), the serving replica, the caller's token name
 * and the time taken. Never a body, a hash or a token.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";

/** Unknown paths are logged too (a client calling the wrong URL is worth seeing), but cut short. */
const MAX_ROUTE_CHARS = 128;

export const accessLog: MiddlewareHandler<AppEnv> = async (c, next) => {
  const start = performance.now();
  try {
    await next();
  } finally {
    // Workers advance the clock only across I/O, so `ms` is the time spent waiting on objects.
    const ms = Math.round((performance.now() - start) * 100) / 100;
    const status = c.res.status;
    const line = JSON.stringify({
      level: status >= 500 ? "error" : "info",
      route: c.req.path.slice(0, MAX_ROUTE_CHARS),
      method: c.req.method,
      status,
      model: c.get("model"),
      tenant: c.get("tenant"),
      replica: c.get("replica"),
      client: c.get("principal")?.name,
      ms,
    });
    // Always `console.log`: a 5xx already has its own `console.error` line with the cause (`onError`).
    console.log(line);
  }
};
