import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import app from "../../src/app";
import { OPERATIONS } from "../../src/docs/api-operations";
import { openApiDocument, openApiPath } from "../../src/docs/openapi";
import type { Env } from "../../src/env";
import { parseJson } from "../../src/wire/json";
import { stringifyJson } from "../../src/wire/json-write";

type Node = Record<string, unknown>;

const env = { REPLICAS: "primary", REQUEST_EXPIRY_SECONDS: "300" } as unknown as Env;

/** Every (method, path) the app serves; `app.use` middleware registers as ALL and is no route. */
function servedRoutes(): Set<string> {
  const served = new Set<string>();
  for (const { method, path } of app.routes)
    if (method !== "ALL") served.add(`${method.toLowerCase()} ${openApiPath(path)}`);
  return served;
}

async function fetchDocument(): Promise<{ text: string; doc: Node }> {
  const res = await app.request("/openapi.json", {}, env);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/json");
  const text = await res.text();
  return { text, doc: JSON.parse(text) as Node };
}

function* schemaNodes(node: unknown, path: string): Generator<[string, Node]> {
  if (typeof node !== "object" || node === null) return;
  if (Array.isArray(node)) {
    for (const [i, child] of node.entries()) yield* schemaNodes(child, `${path}[${i}]`);
    return;
  }
  yield [path, node as Node];
  for (const [key, child] of Object.entries(node)) yield* schemaNodes(child, `${path}.${key}`);
}

describe("GET /openapi.json", () => {
  it("documents exactly the routes the app serves: a new route without an entry fails here", async () => {
    const { doc } = await fetchDocument();
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Record<string, Node>)) {
      for (const method of Object.keys(item)) documented.add(`${method} ${path}`);
    }
    expect([...servedRoutes()].sort()).toEqual([...documented].sort());
  });

  it("is a valid OpenAPI 3.1 document", async () => {
    const { doc } = await fetchDocument();
    expect(doc.openapi).toBe("3.1.0");
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("is checked by a validator that refuses a broken document (a response without its description)", async () => {
    const { doc } = await fetchDocument();
    const paths = doc.paths as Record<string, Record<string, { responses: Record<string, Node> }>>;
    const created = paths["/add"]?.post?.responses["201"];
    expect(created?.description).toBeTypeOf("string");
    delete (created as Node).description;
    const result = await new Validator().validate(doc);
    expect(result.valid).toBe(false);
  });

  it("resolves every $ref and gives every operation a 2xx answer and an {error} answer where it can fail", async () => {
    const { doc } = await fetchDocument();
    const schemas = (doc.components as Node).schemas as Node;
    for (const [at, node] of schemaNodes(doc, "$")) {
      if (typeof node.$ref === "string") {
        const name = node.$ref.replace("#/components/schemas/", "");
        expect(schemas[name], `${at} → ${node.$ref}`).toBeDefined();
      }
    }
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Node>>)) {
      for (const [method, op] of Object.entries(item)) {
        const statuses = Object.keys(op.responses as Node);
        expect(
          statuses.some((s) => s.startsWith("2")),
          `${method} ${path}`,
        ).toBe(true);
        for (const status of statuses.filter((s) => !s.startsWith("2"))) {
          const content = ((op.responses as Node)[status] as Node).content as Node;
          expect((content["application/json"] as Node).schema, `${method} ${path} ${status}`).toEqual({
            $ref: "#/components/schemas/Error",
          });
        }
      }
    }
    expect(schemas.Error).toMatchObject({ type: "object", required: ["error"] });
  });

  it("lists the statuses of the contract for the Dynamo routes", async () => {
    const { doc } = await fetchDocument();
    const statuses = (path: string, method = "post") =>
      Object.keys(((doc.paths as Node)[path] as Record<string, Node>)[method]?.responses as Node).map(Number);
    expect(statuses("/register")).toEqual(expect.arrayContaining([201, 400, 401, 403, 409, 413, 415, 422]));
    expect(statuses("/unregister")).toEqual(expect.arrayContaining([200, 404]));
    expect(statuses("/add")).toEqual(expect.arrayContaining([201, 404, 409, 413, 429]));
    expect(statuses("/prefill_complete")).toEqual(expect.arrayContaining([200, 404]));
    expect(statuses("/free")).toEqual(expect.arrayContaining([200, 404]));
    expect(statuses("/potential_loads")).toEqual(expect.arrayContaining([200, 404]));
    expect(statuses("/route")).toEqual(expect.arrayContaining([201, 404, 409, 503]));
    expect(statuses("/loads", "get")).toEqual(expect.arrayContaining([200, 401]));
    expect(statuses("/health", "get")).toEqual([200]);
  });

  it("takes every body as JSON or MessagePack, from the schema the route validates with", async () => {
    const { doc } = await fetchDocument();
    const schemas = (doc.components as Node).schemas as Node;
    const add = ((doc.paths as Node)["/add"] as Record<string, Node>).post as Node;
    const content = (add.requestBody as Node).content as Node;
    expect(Object.keys(content).sort()).toEqual(["application/json", "application/msgpack"]);
    const addBody = schemas.AddRequest as Node;
    expect(addBody.required).toEqual(["model_name", "request_id", "worker_id", "dp_rank", "sequence_hashes"]);
    expect(Object.keys(addBody.properties as Node)).toContain("routing_group");
  });

  it("marks 64-bit integers uint64 or int64, states that they are exact, and writes their bounds exactly", async () => {
    const { text, doc } = await fetchDocument();
    const schemas = (doc.components as Node).schemas as Record<string, Node>;
    const field = (schema: string, name: string) =>
      (schemas[schema]?.properties as Record<string, Node> | undefined)?.[name] as Node;
    expect(field("RegisterRequest", "worker_id")).toMatchObject({
      type: "integer",
      format: "uint64",
      minimum: 0,
    });
    expect(String(field("RegisterRequest", "worker_id").description)).toMatch(/exact/i);
    expect(field("AddRequest", "sequence_hashes").items).toMatchObject({ type: "integer", format: "int64" });
    expect((schemas.LoadsResponse?.items as Node | undefined)?.properties).toMatchObject({
      worker_id: { format: "uint64" },
    });
    expect(text).toContain('"maximum":18446744073709551615');
    expect(text).toContain('"minimum":-9223372036854775808');
    for (const [at, node] of schemaNodes(doc, "$")) {
      if (
        node.type === "integer" &&
        typeof node.maximum === "number" &&
        node.maximum > Number.MAX_SAFE_INTEGER
      ) {
        expect(node.format, at).toMatch(/^u?int64$/);
      }
    }
  });

  it("gives request examples that the routes' own schemas accept", () => {
    for (const op of OPERATIONS) {
      if (op.example === undefined) continue;
      expect(op.body, `${op.method} ${op.path}`).toBeDefined();
      const wire = parseJson(stringifyJson(op.example as never));
      expect(() => op.body?.parse(wire, ""), `${op.method} ${op.path}`).not.toThrow();
    }
  });

  it("marks the pages public and the registry admin-only", () => {
    const doc = openApiDocument();
    const op = (path: string, method: string) =>
      ((doc.paths as Node)[path] as Record<string, Node>)[method] as Node;
    expect(op("/health", "get").security).toEqual([]);
    expect(op("/", "get").security).toEqual([]);
    expect(op("/register", "post")["x-access"]).toBe("admin");
    expect(op("/loads", "get").security).toBeUndefined();
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
  });
});
