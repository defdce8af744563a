/** Worker registry: `POST /register`, `POST /unregister`, `GET /workers`. */
import { Hono } from "hono";
import { compareBigint } from "../../durable-objects/core/order";
import { cardFromWire, cardToWire } from "../../durable-objects/core/routing/advertisement";
import type { AppEnv } from "../env";
import { unwrap } from "../http/errors";
import { rowsOf } from "../http/listing";
import { compareTracker } from "../http/order";
import { configuredPartitionField, partitionEntry } from "../http/partition";
import { replicaOf } from "../http/replica";
import { trackerFor, trackerStub } from "../http/stubs";
import { visibleTrackers } from "../http/visible-trackers";
import { listingQuery, registerBody, unregisterBody } from "../schema/requests";
import { validBody, validQuery } from "../schema/validate";
import { send, sendOk } from "../wire/respond";

export const registry = new Hono<AppEnv>()
  .post("/register", validBody(registerBody), async (c) => {
    const body = c.req.valid("json");
    const result = await trackerFor(c, body).register({
      workerId: body.worker_id,
      blockSize: body.block_size,
      dpStart: body.dp_start,
      dpSize: body.dp_size,
      // Only what was given, so a worker registered the Dynamo way lists exactly as in Dynamo.
      ...(body.worker_type !== undefined && { workerType: body.worker_type }),
      ...(body.router_config !== undefined && { routerConfig: cardFromWire(body.router_config) }),
      ...(body.incarnation !== undefined && { incarnation: body.incarnation }),
    });
    unwrap(result);
    return sendOk(c, 201);
  })
  .post("/unregister", validBody(unregisterBody), async (c) => {
    const body = c.req.valid("json");
    unwrap(await trackerFor(c, body).unregister(body.worker_id));
    return sendOk(c, 200);
  })
  // Sorted by (model, tenant, worker_id): trackers in order, each tracker's workers in order.
  .get("/workers", validQuery(listingQuery), async (c) => {
    const filter = c.req.valid("query");
    const field = configuredPartitionField(c.env);
    const keys = (await visibleTrackers(c, filter, replicaOf(c))).sort(compareTracker);
    const rows = await rowsOf(keys, async (key) =>
      (await trackerStub(c.env, key).listWorkers())
        .sort((a, b) => compareBigint(a.workerId, b.workerId))
        .map((worker) => ({
          worker_id: worker.workerId,
          model_name: key.model,
          ...partitionEntry(field, key.tenant),
          block_size: worker.blockSize,
          dp_start: worker.dpStart,
          dp_size: worker.dpSize,
          worker_type: worker.workerType,
          router_config: worker.routerConfig && cardToWire(worker.routerConfig),
          // Last and only when given: a worker registered the Dynamo way lists Dynamo's bytes.
          incarnation: worker.incarnation,
        })),
    );
    return send(c, rows, 200);
  });
