/** The service's own routes, for the OpenAPI document: liveness, metrics, this document and the pages. */
import { type Operation, REPLICA_HEADER } from "./api-operation";
import { listingQuery } from "../schema/requests";

export const SERVICE_OPERATIONS: readonly Operation[] = [
  {
    method: "get",
    path: "/health",
    tag: "Operations",
    summary: "Liveness",
    description: "Answers 200 with an empty body; touches no object and needs no token.",
    access: "public",
    success: { status: 200, description: "Alive (empty body)." },
    errors: {},
  },
  {
    method: "get",
    path: "/metrics",
    tag: "Operations",
    summary: "Prometheus metrics",
    description:
      "Per-rank gauges, live requests, workers, operation counters, expiries, replication events and peer lag, read from the tracker objects of one replica (at most 256 trackers per scrape; narrow with the filters).",
    access: "tenant",
    query: listingQuery,
    extraQuery: { replica: "Scrape this replica instead of the serving one." },
    headers: REPLICA_HEADER,
    success: {
      status: 200,
      description: "Prometheus text exposition format 0.0.4.",
      mediaType: "text/plain",
    },
    errors: {},
  },
  {
    method: "get",
    path: "/openapi.json",
    tag: "Operations",
    summary: "This document",
    description:
      "The OpenAPI 3.1 description of the API, generated from the schemas the routes validate with.",
    access: "public",
    success: { status: 200, description: "OpenAPI 3.1 (64-bit bounds written as exact integers)." },
    errors: {},
  },
  {
    method: "get",
    path: "/docs",
    tag: "Operations",
    summary: "API reference page",
    description: "This document rendered as a self-contained HTML page (no external assets).",
    access: "public",
    success: { status: 200, description: "HTML.", mediaType: "text/html" },
    errors: {},
  },
  {
    method: "get",
    path: "/",
    tag: "Operations",
    summary: "Live dashboard",
    description:
      "Every worker rank's decode blocks and prefill tokens per model and tenant, live requests and replica status, refreshed every second from `/workers` and `/loads`. The page itself is public; it asks for a token and sends it as `Authorization: Bearer` when the API requires one.",
    access: "public",
    success: { status: 200, description: "HTML.", mediaType: "text/html" },
    errors: {},
  },
];
