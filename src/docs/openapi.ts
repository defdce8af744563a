/**
 * `src/docs/`: the API described. The OpenAPI document (this file), built from the route
 * descriptions (`api-operation.ts`, `api-operations.ts`, `api-service-operations.ts`), and the
 * `/docs` page rendered from it (`render.ts`, `style.ts`).
 *
 * The OpenAPI 3.1 document, assembled from `api-operations.ts`: request bodies and query parameters
 * are the JSON Schemas of the very schemas the routes validate with. 64-bit integers keep their exact
 * bounds (written as exact JSON integers by `stringifyJson`) and gain `format: uint64 / int64`.
 */

import { errorAnswer } from "../schema/responses";
import type { JsonSchema } from "../schema/schema";
import type { JsonOutput } from "../wire/json-write";
import { type Answer, AUTH_ERRORS, BODY_ERRORS, type Operation, QUERY_ERRORS } from "./api-operation";
import { OPERATIONS } from "./api-operations";

type Doc = { [key: string]: JsonOutput | undefined };

/** Version of the API this document describes. */
export const API_VERSION = "0.1.0";

const JSON_TYPE = "application/json";
const MSGPACK_TYPE = "application/msgpack";
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

const EXACT_NOTE =
  "64-bit: exact at any size. JSON carries it as an integer literal, never rounded (parse with a " +
  "big-integer-aware parser above 2^53); MessagePack as int64/uint64.";

/** Adds `format` and the exactness note to every integer node whose range needs 64 bits. */
export function annotate64(schema: JsonSchema): JsonSchema {
  const out: Doc = {};
  for (const [key, value] of Object.entries(schema)) {
    if (value === undefined) continue;
    if (key === "properties" && typeof value === "object" && value !== null) {
      const props: Doc = {};
      for (const [name, child] of Object.entries(value as Record<string, JsonSchema>)) {
        props[name] = annotate64(child);
      }
      out[key] = props;
    } else if (key === "items" && typeof value === "object" && value !== null && !Array.isArray(value)) {
      out[key] = annotate64(value as JsonSchema);
    } else if ((key === "oneOf" || key === "anyOf" || key === "allOf") && Array.isArray(value)) {
      out[key] = (value as JsonSchema[]).map(annotate64);
    } else {
      out[key] = value;
    }
  }
  const { type, minimum, maximum } = schema;
  if (type === "integer" && typeof maximum === "bigint" && maximum > MAX_SAFE) {
    const signed = typeof minimum === "bigint" && minimum < 0n;
    out.format = signed ? "int64" : "uint64";
    const given = typeof schema.description === "string" ? `${schema.description} ` : "";
    out.description = `${given}${signed ? "Signed (i64) or unsigned (u64): the same 64 bits. " : ""}${EXACT_NOTE}`;
  }
  return out;
}

function componentName(path: string, suffix: string): string {
  const words = path.split(/[^a-z0-9]+/i).filter((w) => w !== "");
  return words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("") + suffix;
}

function ref(name: string): Doc {
  return { $ref: `#/components/schemas/${name}` };
}

function answerContent(answer: Answer, schemaRef: Doc | undefined): Doc | undefined {
  if (answer.mediaType !== undefined) {
    return { [answer.mediaType]: { schema: { type: "string" } } };
  }
  if (schemaRef === undefined) return undefined;
  const media: Doc = { schema: schemaRef };
  if (answer.example !== undefined) media.example = answer.example as JsonOutput;
  return { [JSON_TYPE]: media, [MSGPACK_TYPE]: { schema: schemaRef } };
}

/** Hono's `:name` segments as OpenAPI's `{name}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
}

function parameters(op: Operation): Doc[] {
  const out: Doc[] = [];
  for (const [, name] of op.path.matchAll(/:([A-Za-z0-9_]+)/g)) {
    out.push({
      name,
      in: "path",
      required: true,
      description: op.pathParams?.[name!],
      schema: { type: "string" },
    });
  }
  if (op.query !== undefined) {
    const schema = op.query.toJsonSchema();
    const required = new Set((schema.required as readonly string[] | undefined) ?? []);
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const [name, property] of Object.entries(properties)) {
      const { description, ...rest } = property;
      out.push({
        name,
        in: "query",
        required: required.has(name),
        description: description as string | undefined,
        schema: annotate64(rest),
      });
    }
  }
  for (const [name, description] of Object.entries(op.extraQuery ?? {})) {
    out.push({ name, in: "query", required: false, description, schema: { type: "string" } });
  }
  for (const [name, description] of Object.entries(op.requiredHeaders ?? {})) {
    out.push({ name, in: "header", required: true, description, schema: { type: "string" } });
  }
  for (const [name, description] of Object.entries(op.headers ?? {})) {
    out.push({ name, in: "header", required: false, description, schema: { type: "string" } });
  }
  return out;
}

function errorsOf(op: Operation): Record<number, string> {
  const merged: Record<number, string[]> = {};
  const add = (table: Record<number, string>) => {
    for (const [status, text] of Object.entries(table)) {
      const code = Number(status);
      merged[code] = [...(merged[code] ?? []), text];
    }
  };
  if (op.body !== undefined) add(BODY_ERRORS);
  if (op.query !== undefined) add(QUERY_ERRORS);
  if (op.access !== "public") add(AUTH_ERRORS[op.access]);
  add(op.errors);
  if (op.access !== "public") add({ 503: "The tracker object is overloaded; retry after a second." });
  const out: Record<number, string> = {};
  for (const status of Object.keys(merged)
    .map(Number)
    .sort((a, b) => a - b)) {
    out[status] = (merged[status] as string[]).join(" ");
  }
  return out;
}

function operationObject(op: Operation, schemas: Doc): Doc {
  const doc: Doc = {
    operationId: `${op.method}${componentName(op.path, "") || "Dashboard"}`,
    tags: [op.tag],
    summary: op.summary,
    description: op.description,
    "x-access": op.access,
  };
  if (op.access === "public") doc.security = [];
  const params = parameters(op);
  if (params.length > 0) doc.parameters = params;
  if (op.body !== undefined) {
    const name = componentName(op.path, "Request");
    schemas[name] = annotate64(op.body.toJsonSchema());
    const json: Doc = { schema: ref(name) };
    if (op.example !== undefined) json.example = op.example as JsonOutput;
    doc.requestBody = {
      required: true,
      description:
        "JSON or MessagePack (`application/msgpack`, also `application/x-msgpack`), at most 2 MiB.",
      content: { [JSON_TYPE]: json, [MSGPACK_TYPE]: { schema: ref(name) } },
    };
  }
  if (op.rawBody !== undefined) {
    doc.requestBody = {
      required: true,
      description: op.rawBody.description,
      content: { [op.rawBody.mediaType]: { schema: { type: "string", format: "binary" } } },
    };
  }
  const responses: Doc = {};
  const { status, ...success } = op.success;
  let successRef: Doc | undefined;
  if (success.schema !== undefined) {
    const name = isOk(op) ? "Ok" : componentName(op.path, "Response");
    schemas[name] = annotate64(success.schema.toJsonSchema());
    successRef = ref(name);
  }
  const content = answerContent(success, successRef);
  responses[String(status)] =
    content === undefined
      ? { description: success.description }
      : { description: success.description, content };
  for (const [code, text] of Object.entries(errorsOf(op))) {
    responses[code] = {
      description: text,
      content: { [JSON_TYPE]: { schema: ref("Error") }, [MSGPACK_TYPE]: { schema: ref("Error") } },
    };
  }
  doc.responses = responses;
  return doc;
}

function isOk(op: Operation): boolean {
  const example = op.success.example as { status?: unknown } | undefined;
  return example?.status === "ok";
}

/** Builds the document; cheap enough to build per isolate once. */
export function openApiDocument(operations: readonly Operation[] = OPERATIONS): Doc {
  const schemas: Doc = { Error: annotate64(errorAnswer.toJsonSchema()) };
  const paths: Record<string, Doc> = {};
  for (const op of operations) {
    const path = openApiPath(op.path);
    paths[path] = { ...paths[path], [op.method]: operationObject(op, schemas) };
  }
  return {
    openapi: "3.1.0",
    jsonSchemaDialect: "https://spec.openapis.org/oas/3.1/dialect/base",
    info: {
      title: "Edge Slot Tracker",
      version: API_VERSION,
      summary: "A Dynamo-compatible, replicated slot tracker for KV-cache-aware LLM routing.",
      description:
        'Same paths, bodies, status codes and error texts as NVIDIA Dynamo\'s standalone slot tracker, plus `/route`, `/batch` and operations routes. Bodies are JSON or MessagePack; answers are MessagePack when `Accept` names it. Worker ids and prompt hashes are 64-bit and exact: JSON carries them as integer literals of any size, so a client must parse ids above 2^53 with a big-integer-aware parser (or use MessagePack). Every error is `{"error": "<text>"}`. The tracker\'s partition is `tenant_id` or, under Dynamo\'s later name, `routing_group`: a request may use either (both only when they agree; differing is a 400). `/workers` and `/loads` rows name it as the var `PARTITION_FIELD` says (`tenant_id` by default), one key, never both. An error text that names it says `tenant={t}` when the request named it `tenant_id` and `routing_group={g}` when it named it `routing_group`; a request that named neither (or both) gets the `PARTITION_FIELD` wording.',
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
    },
    servers: [{ url: "/", description: "This Worker" }],
    tags: [
      { name: "Registry", description: "Workers and their data-parallel ranks." },
      { name: "Requests", description: "The lifecycle of a booked request: add, prefill_complete, free." },
      {
        name: "Leases",
        description:
          "Frontend leases (both APIs): while an owner's lease lives its bookings do not expire by age (`OWNED_REQUEST_MAX_AGE_SECONDS`, default 3,600, still applies); when it lapses or is deleted they are freed at that moment.",
      },
      { name: "Loads", description: "Current and potential load per rank." },
      { name: "Routing", description: "Choose and book in one step." },
      { name: "Replication", description: "Peer replicas of each tracker." },
      { name: "Operations", description: "Health, metrics, this document, the dashboard." },
      {
        name: "Selection",
        description:
          "Dynamo's selection service under `/selection`, on the same trackers: choose, choose and book, reservations and their lifecycle, loads with the cache credit, the cache index.",
      },
    ],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description:
            "Required on every route but the public ones when the `API_TOKENS` secret is set; a token covers some tenants (or all), and `admin` tokens also the registry and replication routes.",
        },
      },
    },
  };
}
