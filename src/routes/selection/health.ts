/**
 * `GET /selection/health` (200 `{"status":"ok"}`, touching no object, public) and `GET
 * /selection/ready`: Dynamo's readiness, catalog-wide — every record of every partition the serving
 * replica's directory knows, 200 when one is schedulable, else 503 with the same body. A token that
 * covers some routing groups sees their records only, and readiness is judged on those.
 */
import { Hono } from "hono";
import { readiness } from "../../../durable-objects/core/catalog/catalog-listing";
import type { AppEnv } from "../../env";
import { catalogPartitions, catalogRecordsOf } from "../../http/catalog-partitions";
import { replicaOf } from "../../http/replica";
import { readinessStatus, readinessToWire } from "../../schema/selection/catalog-wire";
import { send, sendOk } from "../../wire/respond";

export const health = new Hono<AppEnv>()
  .get("/health", (c) => sendOk(c, 200))
  .get("/ready", async (c) => {
    const keys = await catalogPartitions(c, replicaOf(c), {});
    const ready = readiness(await catalogRecordsOf(c, keys));
    return send(c, readinessToWire(ready), readinessStatus(ready));
  });
