/**
 * `src/routes/selection/`: Dynamo's selection-service API (SPEC §7, reference selection §1),
 * mounted under `/selection`, one file per route group: choosing (`select.ts`), reservations and
 * their lifecycle (`reservations.ts`), load views (`loads.ts`) and the cache index's dump (`dump.ts`).
 */
import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { dump } from "./dump";
import { loads } from "./loads";
import { reservations } from "./reservations";
import { select } from "./select";

export const selection = new Hono<AppEnv>()
  .route("/", select)
  .route("/", reservations)
  .route("/", loads)
  .route("/", dump);
