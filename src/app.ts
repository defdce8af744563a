/**
 * The Hono app: route groups, the 404/405 fallbacks and the single error handler. Kept apart from
 * `index.ts` so it can be exercised in plain Node without loading the `cloudflare:workers` classes.
 */
import { Hono } from "hono";
import { authenticate } from "./auth/auth";
import type { AppEnv } from "./env";
import { accessLog } from "./http/access-log";
import { onError } from "./http/errors";
import { batch } from "./routes/batch";
import { dashboard } from "./routes/dashboard";
import { docs } from "./routes/docs";
import { health } from "./routes/health";
import { kvEvents } from "./routes/kv-events";
import { leases } from "./routes/leases";
import { lifecycle } from "./routes/lifecycle";
import { loads } from "./routes/loads";
import { metrics } from "./routes/metrics";
import { registry } from "./routes/registry";
import { replication } from "./routes/replication";
import { route } from "./routes/route";
import { selection } from "./routes/selection";
import { send } from "./wire/respond";

const app = new Hono<AppEnv>();

// Logging first, so it also sees the answers `authenticate` gives without calling a route.
app.use(accessLog, authenticate);

/** One chain, so its type carries every route's path, input and answer to `hono/client`. */
const routes = app
  .route("/", registry)
  .route("/", lifecycle)
  .route("/", batch)
  .route("/", loads)
  .route("/", route)
  .route("/", leases)
  .route("/", kvEvents)
  .route("/", replication)
  .route("/", health)
  .route("/selection", selection);

/** The typed API for `hc<AppType>(baseUrl)`; see `src/client/`. */
export type AppType = typeof routes;

// Prometheus text, for scrapers rather than the typed client.
app.route("/", metrics);
// Pages and the API's description, for people and tools rather than the typed client.
app.route("/", docs);
app.route("/", dashboard);

/**
 * Methods per known path, read after every group is mounted: Hono sends a method mismatch to
 * `notFound`, but the contract says 405.
 */
const METHODS_OF_PATH = new Map<string, string[]>();
for (const { path, method } of app.routes) {
  // Middleware (`app.use`) registers as method ALL on `/*`; it is no route.
  if (method === "ALL") continue;
  const methods = METHODS_OF_PATH.get(path) ?? [];
  // Hono answers HEAD on every GET route. A route's validator middleware is an entry of its own.
  for (const m of method === "GET" ? ["GET", "HEAD"] : [method]) if (!methods.includes(m)) methods.push(m);
  METHODS_OF_PATH.set(path, methods);
}

/** Paths with parameters (`/selection/reservations/:reservation_id`), as patterns over one segment each. */
const PARAM_PATHS = [...METHODS_OF_PATH.keys()]
  .filter((path) => path.includes("/:"))
  .map((path) => ({
    path,
    pattern: new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\/:[^/]+/g, "/[^/]+")}$`),
  }));

/** The methods `path` answers, over its exact route and every pattern it matches; undefined for none. */
function allowedMethods(path: string): string[] | undefined {
  const methods = new Set(METHODS_OF_PATH.get(path));
  for (const p of PARAM_PATHS)
    if (p.pattern.test(path)) for (const m of METHODS_OF_PATH.get(p.path)!) methods.add(m);
  return methods.size > 0 ? [...methods] : undefined;
}

app.notFound((c) => {
  const allowed = allowedMethods(c.req.path);
  if (allowed !== undefined)
    return send(c, { error: "method not allowed" }, 405, { allow: allowed.join(", ") });
  return send(c, { error: "route not found" }, 404);
});

app.onError(onError);

export default app;
