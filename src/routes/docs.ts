/** The API's own description: `GET /openapi.json` and the reference page `GET /docs`. */
import { Hono } from "hono";
import { renderDocs } from "../docs/render";
import type { AppEnv } from "../env";
import { stringifyJson } from "../wire/json-write";
import { openApiDocument } from "../docs/openapi";

/** Built on first use per isolate: the document depends on nothing but the code. */
let built: { json: string; html: string } | undefined;

function documents(): { json: string; html: string } {
  if (built === undefined) {
    const doc = openApiDocument();
    built = { json: stringifyJson(doc), html: renderDocs(doc) };
  }
  return built;
}

export const docs = new Hono<AppEnv>()
  .get("/openapi.json", (c) =>
    // Always JSON, whatever `Accept` says: OpenAPI tools read JSON or YAML only.
    c.body(documents().json, 200, { "content-type": "application/json", "cache-control": "no-cache" }),
  )
  .get("/docs", (c) =>
    c.body(documents().html, 200, {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-cache",
      // The page carries its own stylesheet and no script.
      "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    }),
  );
