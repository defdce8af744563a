/**
 * The lease routes of both APIs (SPEC §8), for the OpenAPI document: the request schemas their
 * middleware runs and the answers they send.
 */
import { MAX_LEASES, MAX_LEASE_TTL_MS, MIN_LEASE_TTL_MS } from "../../durable-objects/limits";
import { leaseBody, trackerQuery } from "../schema/requests";
import { leaseAnswer, leaseEndAnswer, leasesAnswer } from "../schema/responses";
import { selectionLeaseBody, selectionLeaseQuery } from "../schema/selection/leases";
import { type Operation, REPLICA_HEADER } from "./api-operation";

const OWNER = {
  owner: "The lease's owner (1..256 UTF-8 bytes), percent-encoded: every character may appear in it.",
};
const CAP = `The tracker holds its maximum of live leases (\`MAX_LEASES\`, default ${MAX_LEASES}): \`lease limit reached: at most {n} live leases per tracker\`.`;
const RENEW = `Creates or renews the lease of \`owner\` (a frontend instance) for \`ttl_ms\` (${MIN_LEASE_TTL_MS}..${MAX_LEASE_TTL_MS}) from now, on this tracker; a tracker without workers holds leases too. A renewal never shortens a lease. While it lives, bookings made with this \`owner\` do not expire by age; renew every ttl/3 (the typed client's \`keepLease\` does).`;
const END =
  "Ends the lease at once: every booking it owns is freed before the answer (visible in the loads), identically at every replica.";
const LIST = "The tracker's live leases with the bookings each owns in the serving replica, sorted by owner.";
const NO_LEASE = (phrase: string) =>
  `\`no live lease for model={m} ${phrase} owner "{owner}"\` (none live: never made, lapsed or ended).`;

export const LEASE_OPERATIONS: readonly Operation[] = [
  {
    method: "post",
    path: "/leases",
    tag: "Leases",
    summary: "Create or renew a frontend's lease",
    description: RENEW,
    access: "tenant",
    body: leaseBody,
    headers: REPLICA_HEADER,
    success: { status: 200, description: "The lease's deadline.", schema: leaseAnswer },
    errors: { 429: CAP },
    example: { model_name: "llama-3-70b", owner: "frontend-7c2f", ttl_ms: 15000 },
  },
  {
    method: "delete",
    path: "/leases/:owner",
    tag: "Leases",
    summary: "End a lease, freeing its bookings",
    description: END,
    access: "tenant",
    query: trackerQuery,
    pathParams: OWNER,
    headers: REPLICA_HEADER,
    success: { status: 200, description: "Ended; `freed` bookings ended with it.", schema: leaseEndAnswer },
    errors: { 404: NO_LEASE("tenant={t}") },
  },
  {
    method: "get",
    path: "/leases",
    tag: "Leases",
    summary: "List a tracker's live leases",
    description: LIST,
    access: "tenant",
    query: trackerQuery,
    headers: REPLICA_HEADER,
    success: { status: 200, description: "The live leases.", schema: leasesAnswer },
    errors: {},
  },
  {
    method: "post",
    path: "/selection/leases",
    tag: "Leases",
    summary: "Create or renew a frontend's lease (selection API)",
    description: `${RENEW} Not in Dynamo's selection service; refused in serde's words as its bodies are.`,
    access: "tenant",
    body: selectionLeaseBody,
    headers: REPLICA_HEADER,
    success: { status: 200, description: "The lease's deadline.", schema: leaseAnswer },
    errors: { 429: CAP },
    example: { model_name: "llama", routing_group: "default", owner: "frontend-7c2f", ttl_ms: 15000 },
  },
  {
    method: "delete",
    path: "/selection/leases/:owner",
    tag: "Leases",
    summary: "End a lease, freeing its bookings (selection API)",
    description: `${END} A bad \`owner\` segment is 400 \`Invalid URL: …\`.`,
    access: "tenant",
    query: selectionLeaseQuery,
    pathParams: OWNER,
    headers: REPLICA_HEADER,
    success: { status: 200, description: "Ended; `freed` bookings ended with it.", schema: leaseEndAnswer },
    errors: { 404: NO_LEASE("routing_group={g}") },
  },
  {
    method: "get",
    path: "/selection/leases",
    tag: "Leases",
    summary: "List a partition's live leases (selection API)",
    description: LIST,
    access: "tenant",
    query: selectionLeaseQuery,
    headers: REPLICA_HEADER,
    success: { status: 200, description: "The live leases.", schema: leasesAnswer },
    errors: {},
  },
];
