/**
 * The selection API's load views (reference selection §6): `GET /selection/loads` (one
 * `ModelLoadResponse` per partition with schedulable workers, sorted by model and routing group),
 * `POST /selection/potential_loads` (with the cache credit on prefill, unlike the slot-tracker
 * API's) and `POST /selection/overlap_scores` (each rank's cached blocks of the prompt by tier).
 */
import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { unwrap } from "../../http/errors";
import { mapBounded } from "../../http/fan-out";
import { replicaOf } from "../../http/replica";
import { trackerFor, trackerStub } from "../../http/stubs";
import { visibleTrackers } from "../../http/visible-trackers";
import { promptQueryBody } from "../../schema/selection/booking";
import { loadToWire, modelLoadToWire, overlapScoresToWire } from "../../schema/selection/booking-wire";
import { workerListQuery } from "../../schema/selection/catalog";
import { promptOf } from "../../schema/selection/serde-prompt";
import { validBody, validQuery } from "../../schema/validate";
import { send } from "../../wire/respond";

export const loads = new Hono<AppEnv>()
  .get("/loads", validQuery(workerListQuery), async (c) => {
    const { model_name: model, routing_group: group } = c.req.valid("query");
    // An empty filter matches no partition, as in Dynamo.
    if (model === "" || group === "") return send(c, [], 200);
    const replica = replicaOf(c);
    const keys = await visibleTrackers(c, { model_name: model, tenant_id: group }, replica);
    const rows = await mapBounded(keys, (key) => trackerStub(c.env, key).selectionLoads());
    const answer = keys.flatMap((key, i) => {
      const loads = rows[i];
      return loads ? [modelLoadToWire(key.model, key.tenant, loads)] : [];
    });
    return send(c, answer, 200);
  })
  .post("/potential_loads", validBody(promptQueryBody), async (c) => {
    const body = c.req.valid("json");
    const stub = trackerFor(c, { model_name: body.model_name, tenant_id: body.routing_group });
    const potential = await stub.selectionPotentialLoads({
      prompt: promptOf(body),
      ...(body.router_config_override !== undefined && { override: body.router_config_override }),
    });
    return send(c, unwrap(potential).loads.map(loadToWire), 200);
  })
  .post("/overlap_scores", validBody(promptQueryBody), async (c) => {
    const body = c.req.valid("json");
    const stub = trackerFor(c, { model_name: body.model_name, tenant_id: body.routing_group });
    const scores = await stub.overlapScores({
      prompt: promptOf(body),
      ...(body.router_config_override !== undefined && { override: body.router_config_override }),
    });
    return send(c, overlapScoresToWire(unwrap(scores)), 200);
  });
