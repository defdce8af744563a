/**
 * The selection API's catalog routes under `/selection` (reference selection §1.1, §7), for the
 * OpenAPI document: the request schemas they validate with and the record as the wire writes it.
 */
import { array } from "../schema/schema-composites";
import { string } from "../schema/schema-scalars";
import { workerListQuery, workerPatchBody, workerRequestBody } from "../schema/selection/catalog";
import { catalogListAnswer, catalogRecordAnswer, readyAnswer } from "../schema/selection/catalog-answers";
import { replicaPeerBody } from "../schema/selection/replica-peers";
import { type Operation, ok, REPLICA_HEADER } from "./api-operation";

const WORKER_ID = {
  worker_id: "The worker's id (u64, decimal); 400 with axum's `Path` text when it is not one.",
};

const PEER_REFUSED =
  "Always: peers are the replicas `REPLICAS` names (the text names the variable), or `replica sync is disabled` with one replica.";

export const SELECTION_OPERATIONS: readonly Operation[] = [
  {
    method: "post",
    path: "/selection/workers",
    tag: "Selection",
    summary: "Upsert a worker's catalog record",
    description:
      "Replaces the record whole and judges it (Dynamo's `not_schedulable_reasons`, then reconciliation with the partition). 201 also for an `incomplete` record. Worker ids are service-wide: a record naming another (model_name, routing_group) moves the worker there, out of its old partition (its bookings there end). A schedulable record (or an incomplete one with the partition's block size) is a slot-tracker worker of its ranks. Bookings on the ranks the old and new ranges share stay, unless `incarnation` (ours) is higher than the record's: then none do.",
    access: "admin",
    body: workerRequestBody,
    headers: REPLICA_HEADER,
    success: { status: 201, description: "The record as judged.", schema: catalogRecordAnswer },
    errors: {
      413: "The record's text passes the per-record budget.",
      429: "The partition holds its maximum of workers or ranks.",
    },
    example: {
      worker_id: 18446744073709551557n,
      model_name: "llama",
      endpoint: "http://w1:8000",
      block_size: 16,
    },
  },
  {
    method: "get",
    path: "/selection/workers",
    tag: "Selection",
    summary: "List catalog records",
    description:
      "Every record the caller's token may see (the routing group is the tenant of a grant), `/register`ed workers included as `incomplete`, sorted by (model_name, routing_group, worker_id). An empty filter matches nothing.",
    access: "tenant",
    query: workerListQuery,
    headers: REPLICA_HEADER,
    success: { status: 200, description: "Records in Dynamo's field order.", schema: catalogListAnswer },
    errors: {},
  },
  {
    method: "patch",
    path: "/selection/workers/:worker_id",
    tag: "Selection",
    summary: "Patch a catalog record",
    description:
      "Replaces the fields given (a collection whole; `null` is absent, so nothing can be cleared) and judges the record afresh. A DP range change keeps the live bookings on ranks in both ranges and ends those on the ranks it drops.",
    access: "admin",
    pathParams: WORKER_ID,
    body: workerPatchBody,
    headers: REPLICA_HEADER,
    success: { status: 200, description: "The record as judged.", schema: catalogRecordAnswer },
    errors: {
      404: "`worker {id} not found`.",
      409: "`/register` put the id in more than one partition: POST names the one to keep.",
    },
    example: { data_parallel_size: 4 },
  },
  {
    method: "delete",
    path: "/selection/workers/:worker_id",
    tag: "Selection",
    summary: "Remove a worker from the catalog",
    description:
      "Drains the worker, ends its bookings and forgets it (in every partition listing the id); answers the final record, `unschedulable`, reasons cleared.",
    access: "admin",
    pathParams: WORKER_ID,
    headers: REPLICA_HEADER,
    success: { status: 200, description: "The final record.", schema: catalogRecordAnswer },
    errors: { 404: "`worker {id} not found`." },
  },
  {
    method: "get",
    path: "/selection/health",
    tag: "Selection",
    summary: "Liveness",
    description: 'Answers 200 `{"status":"ok"}`; touches no object and needs no token.',
    access: "public",
    success: ok(200, "Alive."),
    errors: {},
  },
  {
    method: "get",
    path: "/selection/ready",
    tag: "Selection",
    summary: "Readiness",
    description:
      "Catalog-wide: 200 when any record the token may see is schedulable, else 503, with the same body either way.",
    access: "tenant",
    headers: REPLICA_HEADER,
    success: { status: 200, description: "Ready (503: the same body, not ready).", schema: readyAnswer },
    errors: { 503: "Nothing schedulable: the body is `/ready`'s, `ready` false." },
  },
  {
    method: "get",
    path: "/selection/replica_sync/peers",
    tag: "Selection",
    summary: "The other replicas",
    description: "The replicas `REPLICAS` names other than the serving one, sorted; empty with one replica.",
    access: "admin",
    headers: REPLICA_HEADER,
    success: {
      status: 200,
      description: "Replica names.",
      schema: array(string({ minBytes: 1, maxBytes: 256 })),
    },
    errors: {},
  },
  {
    method: "post",
    path: "/selection/replica_sync/register_peer",
    tag: "Selection",
    summary: "Register a peer (refused)",
    description: "Peers are fixed by configuration, so this answers 409 after reading the body.",
    access: "admin",
    body: replicaPeerBody,
    success: { status: 201, description: "Never: see 409." },
    errors: { 409: PEER_REFUSED },
    example: { endpoint: "tcp://peer:9092" },
  },
  {
    method: "post",
    path: "/selection/replica_sync/deregister_peer",
    tag: "Selection",
    summary: "Deregister a peer (refused)",
    description: "Peers are fixed by configuration, so this answers 409 after reading the body.",
    access: "admin",
    body: replicaPeerBody,
    success: { status: 200, description: "Never: see 409." },
    errors: { 409: PEER_REFUSED },
    example: { endpoint: "tcp://peer:9092" },
  },
];
