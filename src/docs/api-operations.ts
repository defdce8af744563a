/**
 * Every route the Worker serves, described once for the OpenAPI document: the request schema the
 * route validates with (from `requests.ts`, the very object its middleware runs), the answer's shape
 * (`responses.ts`) and the statuses of SPEC §3 and §6. A test walks `app.routes` and fails for a
 * route missing here, so a new route cannot ship undocumented.
 */
import { MAX_BATCH_OPS, MAX_HASHES_PER_CALL } from "../../durable-objects/limits";
import {
  addBody,
  batchBody,
  listingQuery,
  potentialLoadsBody,
  registerBody,
  requestIdBody,
  routeBody,
  trackerQuery,
  unregisterBody,
} from "../schema/requests";
import {
  batchAnswer,
  loadsAnswer,
  peersAnswer,
  potentialLoadsAnswer,
  routeAnswer,
  workersAnswer,
} from "../schema/responses";
import { SELECTION_BOOKING_OPERATIONS } from "./api-booking-operations";
import { KV_OPERATIONS } from "./api-kv-operations";
import { LEASE_OPERATIONS } from "./api-lease-operations";
import { type Operation, ok, REPLICA_HEADER } from "./api-operation";
import { SELECTION_OPERATIONS } from "./api-selection-operations";
import { SERVICE_OPERATIONS } from "./api-service-operations";

const NO_LEASE =
  '`no live lease for model={m} tenant={t} owner "{owner}"` (an `owner` without a live lease; nothing is booked)';
const OWNER_CAP = "an `owner` holds its maximum of live bookings (`MAX_BOOKINGS_PER_OWNER`)";

/** The tracker routes: Dynamo's, then `/batch`, `/route` and replication status. */
const TRACKER_OPERATIONS: readonly Operation[] = [
  {
    method: "post",
    path: "/register",
    tag: "Registry",
    summary: "Register a worker's data-parallel ranks",
    description:
      "Adds ranks `dp_start ..< dp_start + dp_size` of `worker_id` to the (model, tenant) tracker, creating the tracker on its first worker; that worker fixes the block size. A worker that restarted registers again with a higher `incarnation`: that replaces its registration in one step, its live requests dropped, and answers as a new registration does.",
    access: "admin",
    body: registerBody,
    headers: REPLICA_HEADER,
    success: ok(201, "Registered."),
    errors: {
      400: "`block_size must be greater than 0`, `dp_size must be greater than 0`, `dp range overflows u32: start={s} size={n}`; `tenant_id` and `routing_group` differ.",
      409: "`block_size mismatch for model={m} tenant={t}: existing={a}, requested={b}`; `worker {id} already registered for model={m} tenant={t}` (also for an equal, lower or absent `incarnation`, and for a worker of the selection catalog).",
      429: "The tracker holds its maximum of workers or ranks.",
    },
    example: {
      worker_id: 18446744073709551557n,
      model_name: "llama-3-70b",
      block_size: 16,
      dp_start: 0,
      dp_size: 2,
    },
  },
  {
    method: "post",
    path: "/unregister",
    tag: "Registry",
    summary: "Unregister a worker",
    description:
      "Removes the worker and drops its live requests. When the last worker leaves, the tracker and all its state are deleted.",
    access: "admin",
    body: unregisterBody,
    headers: REPLICA_HEADER,
    success: ok(200, "Unregistered."),
    errors: {
      404: "`worker {id} not found for model={m} tenant={t}` (also when the tracker does not exist).",
    },
    example: { worker_id: 18446744073709551557n, model_name: "llama-3-70b" },
  },
  {
    method: "get",
    path: "/workers",
    tag: "Registry",
    summary: "List registered workers",
    description:
      "Every worker the caller's token may see, sorted by (model, tenant, worker_id). Each filter is optional; the tenant filter may be given as `tenant_id` or `routing_group`. Rows name the partition as `PARTITION_FIELD` says.",
    access: "tenant",
    query: listingQuery,
    headers: REPLICA_HEADER,
    success: { status: 200, description: "The workers.", schema: workersAnswer },
    errors: {},
  },
  {
    method: "post",
    path: "/add",
    tag: "Requests",
    summary: "Book a request on a worker rank",
    description:
      "Records a live request: its prompt's block hashes count towards the rank's decode blocks, `new_isl_tokens` towards its prefill tokens until `/prefill_complete` (decaying over `expected_prefill_duration_ms` when given). Expires after `REQUEST_EXPIRY_SECONDS` if never freed.",
    access: "tenant",
    body: addBody,
    headers: REPLICA_HEADER,
    success: ok(201, "Booked."),
    errors: {
      404: `\`no slot tracker for model={m} tenant={t}\`; \`Worker WorkerWithDpRank { worker_id: {id}, dp_rank: {r} } not found\`; ${NO_LEASE}.`,
      409: "`Request {request_id} already exists (assigned to worker WorkerWithDpRank { worker_id: {id}, dp_rank: {r} })`.",
      413: `More than ${MAX_HASHES_PER_CALL} hashes, or the tracker's block budget is exhausted.`,
      429: `The tracker holds its maximum of live requests; ${OWNER_CAP}.`,
    },
    example: {
      model_name: "llama-3-70b",
      request_id: "req-7f3a",
      worker_id: 18446744073709551557n,
      dp_rank: 1,
      sequence_hashes: [4611686018427387904n, -1, 17],
      new_isl_tokens: 512,
    },
  },
  {
    method: "post",
    path: "/prefill_complete",
    tag: "Requests",
    summary: "Mark a request's prefill done",
    description: "Its tokens stop counting as prefill load. Repeating it answers 200 again.",
    access: "tenant",
    body: requestIdBody,
    headers: REPLICA_HEADER,
    success: ok(200, "Marked."),
    errors: { 404: "`no slot tracker for model={m} tenant={t}`; `Request {request_id} not found`." },
    example: { model_name: "llama-3-70b", request_id: "req-7f3a" },
  },
  {
    method: "post",
    path: "/free",
    tag: "Requests",
    summary: "End a request",
    description:
      "Removes the live request. An unknown request answers 200; a free that arrives before its add is remembered, and the later add counts normally.",
    access: "tenant",
    body: requestIdBody,
    headers: REPLICA_HEADER,
    success: ok(200, "Freed (or nothing to free)."),
    errors: { 404: "`no slot tracker for model={m} tenant={t}`." },
    example: { model_name: "llama-3-70b", request_id: "req-7f3a" },
  },
  {
    method: "post",
    path: "/batch",
    tag: "Requests",
    summary: "Apply many add / prefill_complete / free ops to one tracker, in order",
    description: `Up to ${MAX_BATCH_OPS} ops in one call to the tracker object: the way past one object's request rate. The ops are validated together (one malformed op refuses the whole batch, naming it, and applies nothing); each applied op's result carries the status its own route would have answered.`,
    access: "tenant",
    body: batchBody,
    headers: REPLICA_HEADER,
    success: {
      status: 200,
      description: "One result per op, in order.",
      schema: batchAnswer,
      example: {
        results: [{ status: 201 }, { status: 200 }, { status: 404, error: "Request req-x not found" }],
      },
    },
    errors: {
      404: "`no slot tracker for model={m} tenant={t}`.",
      413: `More than ${MAX_BATCH_OPS} ops, or more than ${MAX_HASHES_PER_CALL} hashes in one op.`,
    },
    example: {
      model_name: "llama-3-70b",
      ops: [
        {
          op: "add",
          request_id: "req-1",
          worker_id: 7,
          dp_rank: 0,
          sequence_hashes: [1, 2],
          new_isl_tokens: 64,
        },
        { op: "prefill_complete", request_id: "req-1" },
        { op: "free", request_id: "req-x" },
      ],
    },
  },
  {
    method: "get",
    path: "/loads",
    tag: "Loads",
    summary: "Current load of every rank",
    description:
      "One row per registered rank (idle ranks too), sorted by (model, tenant, worker_id, dp_rank). Each filter is optional; the tenant filter may be given as `tenant_id` or `routing_group`. Rows name the partition as `PARTITION_FIELD` says.",
    access: "tenant",
    query: listingQuery,
    headers: REPLICA_HEADER,
    success: { status: 200, description: "The loads.", schema: loadsAnswer },
    errors: {},
  },
  {
    method: "post",
    path: "/potential_loads",
    tag: "Loads",
    summary: "Load of every rank if a prompt were placed there",
    description:
      "For every rank: the prefix of the query it already holds is subtracted from the blocks the prompt would add; `new_isl_tokens` is added to its prefill tokens.",
    access: "tenant",
    body: potentialLoadsBody,
    headers: REPLICA_HEADER,
    success: {
      status: 200,
      description: "One row per rank, sorted by (worker_id, dp_rank).",
      schema: potentialLoadsAnswer,
    },
    errors: { 404: "`no slot tracker for model={m} tenant={t}`." },
    example: {
      model_name: "llama-3-70b",
      sequence_hashes: [4611686018427387904n, -1, 99],
      new_isl_tokens: 256,
    },
  },
  {
    method: "post",
    path: "/route",
    tag: "Routing",
    summary: "Choose a worker and book the request there, atomically",
    description:
      "Chooses by the workers' advertised router mode (Dynamo's KV cost by default) and books the request as `/add` would. With prefill workers registered, a prefill rank is chosen and booked too, under `<request_id>#prefill`. Free both when done.",
    access: "tenant",
    body: routeBody,
    headers: {
      ...REPLICA_HEADER,
      "x-slot-tracker-seed": 'Seeds the random draws (u32); accepted only where `ALLOW_TEST_SEED` is "1".',
    },
    success: { status: 201, description: "Chosen and booked.", schema: routeAnswer },
    errors: {
      404: `\`no slot tracker for model={m} tenant={t}\`; ${NO_LEASE}.`,
      409: "`Request {request_id} already exists (…)`.",
      413: `More than ${MAX_HASHES_PER_CALL} hashes, or the tracker's block budget is exhausted.`,
      429: `The tracker holds its maximum of live requests; ${OWNER_CAP}.`,
      503: "No decode worker is registered.",
    },
    example: {
      model_name: "llama-3-70b",
      request_id: "req-7f3b",
      sequence_hashes: [4611686018427387904n, 5],
      new_isl_tokens: 128,
    },
  },
  {
    method: "get",
    path: "/replica_sync/peers",
    tag: "Replication",
    summary: "Replication status towards each peer replica",
    description:
      "The serving replica's outbox per peer for one (model, tenant): events queued, acknowledged, lag.",
    access: "admin",
    query: trackerQuery,
    headers: REPLICA_HEADER,
    success: {
      status: 200,
      description: "Peers sorted by name (none with one replica).",
      schema: peersAnswer,
    },
    errors: {},
  },
];

export const OPERATIONS: readonly Operation[] = [
  ...TRACKER_OPERATIONS,
  ...LEASE_OPERATIONS,
  ...KV_OPERATIONS,
  ...SELECTION_OPERATIONS,
  ...SELECTION_BOOKING_OPERATIONS,
  ...SERVICE_OPERATIONS,
];
