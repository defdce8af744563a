/**
 * `src/routes/selection/`: Dynamo's selection service API (SPEC §7, reference selection §1),
 * mounted at `/selection` by `app.ts`, so a selection-service client configured with
 * `<host>/selection` as its base URL works unchanged. One file per route group: the worker catalog
 * (`workers.ts`), liveness and readiness (`health.ts`), the replica peers (`peers.ts`), choosing
 * (`select.ts`), reservations and their lifecycle (`reservations.ts`), load views (`loads.ts`), the cache index's dump
 * (`dump.ts`), frontend leases (`leases.ts`, not Dynamo's) and engine KV events (`../kv-events.ts`,
 * not Dynamo's: its indexer takes them over ZMQ).
 */
import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { dump } from "./dump";
import { kvEvents } from "../kv-events";
import { health } from "./health";
import { leases } from "./leases";
import { loads } from "./loads";
import { peers } from "./peers";
import { reservations } from "./reservations";
import { select } from "./select";
import { workers } from "./workers";

export const selection = new Hono<AppEnv>()
  .route("/", workers)
  .route("/", health)
  .route("/", peers)
  .route("/", select)
  .route("/", reservations)
  .route("/", loads)
  .route("/", dump)
  .route("/", leases)
  .route("/", kvEvents);
