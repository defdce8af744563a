/**
 * Frontend leases (SPEC §8): `POST /leases` (create or renew), `DELETE /leases/{owner}` (end at
 * once, freeing the owner's bookings) and `GET /leases` (live leases of one tracker). A lease lives
 * in its tracker object even before the tracker has a worker, so these routes name one tracker and
 * never go through the directory. The answers are shared with the selection API's lease routes.
 */
import { Hono } from "hono";
import { compareUtf8 } from "../../durable-objects/core/order";
import type { LeaseInfo } from "../../durable-objects/core/lease/lease-book";
import type { AppEnv } from "../env";
import { unwrap } from "../http/errors";
import { trackerFor } from "../http/stubs";
import { leaseBody, leaseOwner, trackerQuery } from "../schema/requests";
import { validBody, validQuery } from "../schema/validate";
import { send } from "../wire/respond";

/** `POST /leases`' answer: until when the lease lives (epoch ms), never earlier than before. */
export function renewedToWire(lease: { owner: string; expiresAtMs: number }) {
  return { owner: lease.owner, expires_at_ms: lease.expiresAtMs };
}

/** `GET /leases`' rows, sorted by owner (UTF-8 bytes, as every listing's names are). */
export function leaseRowsToWire(leases: readonly LeaseInfo[]) {
  return [...leases]
    .sort((a, b) => compareUtf8(a.owner, b.owner))
    .map((lease) => ({ owner: lease.owner, expires_at_ms: lease.expiresAtMs, bookings: lease.bookings }));
}

export const leases = new Hono<AppEnv>()
  .post("/leases", validBody(leaseBody), async (c) => {
    const body = c.req.valid("json");
    const lease = unwrap(await trackerFor(c, body).renewLease(body.owner, body.ttl_ms));
    return send(c, renewedToWire(lease), 200);
  })
  // The query names the tracker; the path, the owner (any text, percent-encoded).
  .delete("/leases/:owner", validQuery(trackerQuery), async (c) => {
    const query = c.req.valid("query");
    const owner = leaseOwner.parse(c.req.param("owner"), "owner");
    const { freed } = unwrap(await trackerFor(c, query).endLease(owner));
    return send(c, { owner, freed }, 200);
  })
  .get("/leases", validQuery(trackerQuery), async (c) => {
    const query = c.req.valid("query");
    return send(c, leaseRowsToWire(await trackerFor(c, query).listLeases()), 200);
  });
