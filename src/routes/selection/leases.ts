/**
 * The lease routes under `/selection` (SPEC §8; Dynamo's selection service has none): the slot-tracker
 * API's three, with the partition named `routing_group` in bodies, queries and error texts, bodies
 * refused in serde's words, and the same answers. One lease book: a lease made here owns bookings
 * made through either API.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { unwrap } from "../../http/errors";
import { trackerFor } from "../../http/stubs";
import {
  leasePartition,
  selectionLeaseBody,
  selectionLeaseQuery,
  selectionOwnerParam,
} from "../../schema/selection/leases";
import { validBody, validQuery } from "../../schema/validate";
import { send } from "../../wire/respond";
import { leaseRowsToWire, renewedToWire } from "../leases";

export const leases = new Hono<AppEnv>()
  .post("/leases", validBody(selectionLeaseBody), async (c) => {
    const body = c.req.valid("json");
    const lease = unwrap(await trackerFor(c, leasePartition(body)).renewLease(body.owner, body.ttl_ms));
    return send(c, renewedToWire(lease), 200);
  })
  .delete("/leases/:owner", validQuery(selectionLeaseQuery), async (c) => {
    const query = c.req.valid("query");
    const owner = selectionOwnerParam(c.req.param("owner"));
    const { freed } = unwrap(await trackerFor(c, leasePartition(query)).endLease(owner));
    return send(c, { owner, freed }, 200);
  })
  .get("/leases", validQuery(selectionLeaseQuery), async (c) => {
    const query = c.req.valid("query");
    return send(c, leaseRowsToWire(await trackerFor(c, leasePartition(query)).listLeases()), 200);
  });
