/**
 * The selection API's worker catalog (reference selection §1.1, §7): `POST /workers` (201, also for
 * an incomplete record), `GET /workers`, `PATCH` and `DELETE /workers/{worker_id}`. Writes need an
 * admin token covering the routing group; reads follow the tenant grants, the routing group being
 * the tenant.
 *
 * Worker ids are service-wide here, as in Dynamo (the slot-tracker API scopes them per tracker): a
 * POST naming another partition than the worker's moves it, in two steps across objects — upserted
 * into the new one, then removed from every other partition that lists it (its bookings there end).
 * A write the new partition refuses (a cap, a record too large) so changes nothing. The steps are not
 * atomic: a reader in between sees the worker in both partitions (and at other replicas, until both
 * changes arrive, in the old one, the new one, both or neither); a POST failing between them leaves
 * the worker in both, and its retry completes the move. Two concurrent POSTs of
 * one id to two partitions can both land; the next write of the id settles it. PATCH and DELETE
 * find the worker's partition through the directory: PATCH refuses (409) an id that `/register` put
 * in more than one partition (only the slot-tracker API can), DELETE removes it from each.
 */
import { type Context, Hono } from "hono";
import { listRecords } from "../../../durable-objects/core/catalog/catalog-listing";
import { catalogText, partitionText } from "../../../durable-objects/core/catalog/catalog-messages";
import type { CatalogRecord } from "../../../durable-objects/core/catalog/catalog-record";
import type { TrackerKey } from "../../../durable-objects/types";
import { adminOnly, authorize } from "../../auth/auth";
import type { AppEnv } from "../../env";
import {
  catalogPartitions,
  catalogRecordsOf,
  catalogStub,
  partitionsOfWorker,
  visibleTo,
} from "../../http/catalog-partitions";
import { HttpError, httpErrorOf, unwrap } from "../../http/errors";
import { replicaOf } from "../../http/replica";
import { noteTarget } from "../../http/request-vars";
import {
  workerIdParam,
  workerListQuery,
  workerPatchBody,
  workerPatchOf,
  workerRequestBody,
  workerUpsertOf,
} from "../../schema/selection/catalog";
import { catalogRecordToWire } from "../../schema/selection/catalog-wire";
import { validBody, validQuery } from "../../schema/validate";
import { send } from "../../wire/respond";

const sameKey = (a: TrackerKey, b: TrackerKey) => a.model === b.model && a.tenant === b.tenant;

/** Axum extracts the path before the body: a bad id is a 400 whatever the body holds. */
const validWorkerId = async (c: Context<AppEnv>, next: () => Promise<void>) => {
  workerIdParam(c.req.param("worker_id") ?? "");
  await next();
};

/** The visible partitions listing `workerId`; a 404 in Dynamo's words when there is none. */
async function partitionsOrNotFound(c: Context<AppEnv>, workerId: bigint): Promise<TrackerKey[]> {
  const keys = visibleTo(c, await partitionsOfWorker(c, replicaOf(c), workerId));
  if (keys.length === 0) throw new HttpError(404, catalogText.workerNotFound(workerId));
  noteTarget(c, keys[0]!);
  return keys;
}

/** Removes `workerId` from `key`'s catalog; a partition that no longer lists it is no failure. */
async function removeFrom(
  c: Context<AppEnv>,
  key: TrackerKey,
  workerId: bigint,
): Promise<CatalogRecord | undefined> {
  const result = await catalogStub(c, key).catalogDelete(workerId);
  if (result.ok) return result.record;
  if (result.code === "worker_not_found") return undefined;
  throw httpErrorOf(result);
}

export const workers = new Hono<AppEnv>()
  .post("/workers", adminOnly, validBody(workerRequestBody), async (c) => {
    const input = workerUpsertOf(c.req.valid("json"));
    const replica = replicaOf(c);
    const target = { replica, model: input.model!, tenant: input.tenant! };
    authorize(c, target.tenant);
    noteTarget(c, target);
    const elsewhere = (await partitionsOfWorker(c, replica, input.workerId)).filter(
      (key) => !sameKey(key, target),
    );
    // Every partition it leaves is written too: the token must cover each before anything changes.
    for (const key of elsewhere) authorize(c, key.tenant);
    // The new partition first: a write it refuses (a cap, a record too large) changes nothing.
    const { record } = unwrap(await catalogStub(c, target).catalogUpsert(input));
    for (const key of elsewhere) await removeFrom(c, key, input.workerId);
    return send(c, catalogRecordToWire(record), 201);
  })
  .get("/workers", validQuery(workerListQuery), async (c) => {
    const { model_name: model, routing_group: tenant } = c.req.valid("query");
    if (tenant !== undefined) authorize(c, tenant);
    const replica = replicaOf(c);
    noteTarget(c, { model, tenant, replica });
    // An empty filter matches no record, as in Dynamo (no partition has an empty name).
    if (model === "" || tenant === "") return send(c, [], 200);
    const keys = await catalogPartitions(c, replica, { model, tenant });
    const records = listRecords(await catalogRecordsOf(c, keys), { model, tenant });
    return send(c, records.map(catalogRecordToWire), 200);
  })
  .patch("/workers/:worker_id", adminOnly, validWorkerId, validBody(workerPatchBody), async (c) => {
    const workerId = workerIdParam(c.req.param("worker_id"));
    const patch = workerPatchOf(c.req.valid("json"));
    const keys = await partitionsOrNotFound(c, workerId);
    if (keys.length > 1) {
      const where = keys.map((key) => partitionText(key.model, key.tenant)).join(", ");
      throw new HttpError(
        409,
        `worker ${workerId} is registered in more than one partition (${where}); POST /workers with the one to keep`,
      );
    }
    const { record } = unwrap(await catalogStub(c, keys[0]!).catalogPatch(workerId, patch));
    return send(c, catalogRecordToWire(record), 200);
  })
  .delete("/workers/:worker_id", adminOnly, validWorkerId, async (c) => {
    const workerId = workerIdParam(c.req.param("worker_id"));
    const keys = await partitionsOrNotFound(c, workerId);
    let first: CatalogRecord | undefined;
    for (const key of keys) {
      const removed = await removeFrom(c, key, workerId);
      first ??= removed;
    }
    if (first === undefined) throw new HttpError(404, catalogText.workerNotFound(workerId));
    return send(c, catalogRecordToWire(first), 200);
  });
