/**
 * `/docs`: the OpenAPI document rendered on the server into one self-contained HTML page. No script,
 * no external asset: it reads the same in memory as offline, and every value shown comes from the
 * document, so the page cannot drift from `/openapi.json`.
 */
import type { JsonOutput } from "../wire/json-write";
import { DOCS_CSS } from "./style";

type Node = { readonly [key: string]: JsonOutput | undefined };

const METHOD_ORDER = ["get", "post", "put", "patch", "delete"];

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Inline markdown of the descriptions: only `code` spans. */
function prose(text: unknown): string {
  if (typeof text !== "string") return "";
  return escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>");
}

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** JSON with two-space indent; bigint exact (the examples carry 64-bit ids). */
export function prettyJson(value: unknown, indent = ""): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "bigint") return value.toString();
  if (typeof value !== "object") return JSON.stringify(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v !== "object" || v === null))
      return `[${value.map((v) => prettyJson(v)).join(", ")}]`;
    return `[\n${value.map((v) => inner + prettyJson(v, inner)).join(",\n")}\n${indent}]`;
  }
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return "{}";
  return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${prettyJson(v, inner)}`).join(",\n")}\n${indent}}`;
}

function resolve(doc: Node, schema: Node): { name?: string; schema: Node } {
  const target = schema.$ref;
  if (typeof target !== "string") return { schema };
  const name = target.split("/").pop() ?? target;
  const components = isNode(doc.components) && isNode(doc.components.schemas) ? doc.components.schemas : {};
  const found = components[name];
  return { name, schema: isNode(found) ? found : {} };
}

function typeLabel(schema: Node): string {
  if (schema.const !== undefined) return prettyJson(schema.const);
  if (Array.isArray(schema.oneOf)) return "one of the shapes below";
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  const type = typeof schema.type === "string" ? schema.type : "any";
  if (type === "array" && isNode(schema.items)) return `array of ${typeLabel(schema.items)}`;
  if (typeof schema.format === "string") return `${type} (${schema.format})`;
  return type;
}

function constraints(schema: Node): string {
  const parts: string[] = [];
  const bound = (v: JsonOutput | undefined) =>
    typeof v === "bigint" || typeof v === "number" ? String(v) : undefined;
  const min = bound(schema.minimum);
  const max = bound(schema.maximum);
  if (min !== undefined && max !== undefined) parts.push(`${min} … ${max}`);
  else if (min !== undefined) parts.push(`≥ ${min}`);
  if (typeof schema.maxItems === "number") parts.push(`≤ ${schema.maxItems} items`);
  if (schema.default !== undefined) parts.push(`default ${prettyJson(schema.default)}`);
  return parts.map((p) => `<span class="chip">${escapeHtml(p)}</span>`).join(" ");
}

/** Rows of a field table: nested objects (also inside arrays) flattened as `parent.child`. */
function fieldRows(schema: Node, prefix = ""): string {
  const properties = isNode(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  let rows = "";
  for (const [name, raw] of Object.entries(properties)) {
    if (!isNode(raw)) continue;
    const path = prefix + name;
    const req = required.has(name)
      ? '<span class="req">required</span>'
      : '<span class="opt">optional</span>';
    rows += `<tr><td><code>${escapeHtml(path)}</code> ${req}</td><td class="type">${escapeHtml(typeLabel(raw))}</td><td>${constraints(raw)}</td><td>${prose(raw.description)}</td></tr>`;
    if (isNode(raw.properties)) rows += fieldRows(raw, `${path}.`);
    if (isNode(raw.items) && isNode(raw.items.properties)) rows += fieldRows(raw.items, `${path}[].`);
    if (isNode(raw.items) && Array.isArray(raw.items.oneOf))
      rows += variantRows(raw.items.oneOf, `${path}[]`);
  }
  return rows;
}

/** The shapes of a `oneOf`, each headed by the value of its discriminating `const` field. */
function variantRows(variants: readonly JsonOutput[], path: string): string {
  let rows = "";
  for (const variant of variants) {
    if (!isNode(variant) || !isNode(variant.properties)) continue;
    const tag = Object.entries(variant.properties).find(([, p]) => isNode(p) && p.const !== undefined);
    const label = tag === undefined ? "one of" : `${tag[0]} = ${prettyJson((tag[1] as Node).const)}`;
    rows += `<tr class="variant"><td colspan="4"><code>${escapeHtml(path)}</code> with <code>${escapeHtml(label)}</code></td></tr>`;
    rows += fieldRows(variant, `${path}.`);
  }
  return rows;
}

function schemaBlock(doc: Node, schemaRef: Node): string {
  const { name, schema } = resolve(doc, schemaRef);
  const title = name === undefined ? "" : `<div class="schema-name">${escapeHtml(name)}</div>`;
  const table = (s: Node, label: string) =>
    `${label}<table class="fields"><thead><tr><th>Field</th><th>Type</th><th>Range</th><th>Notes</th></tr></thead><tbody>${fieldRows(s)}</tbody></table>`;
  if (isNode(schema.properties)) return title + table(schema, "");
  if (schema.type === "array" && isNode(schema.items))
    return title + table(schema.items, `<p class="muted">An array of:</p>`);
  return `${title}<p class="muted">${escapeHtml(typeLabel(schema))}</p>`;
}

function parametersBlock(params: JsonOutput | undefined): string {
  if (!Array.isArray(params) || params.length === 0) return "";
  const rows = params
    .filter(isNode)
    .map((p) => {
      const schema = isNode(p.schema) ? p.schema : {};
      const req =
        p.required === true ? '<span class="req">required</span>' : '<span class="opt">optional</span>';
      return `<tr><td><code>${escapeHtml(String(p.name))}</code> ${req}</td><td>${escapeHtml(String(p.in))}</td><td class="type">${escapeHtml(typeLabel(schema))}</td><td>${prose(p.description)} ${constraints(schema)}</td></tr>`;
    })
    .join("");
  return `<h4>Parameters</h4><table class="fields"><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Notes</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function responsesBlock(doc: Node, responses: JsonOutput | undefined): string {
  if (!isNode(responses)) return "";
  let out = '<h4>Responses</h4><dl class="responses">';
  for (const [status, raw] of Object.entries(responses)) {
    if (!isNode(raw)) continue;
    const kind = status.startsWith("2") ? "ok" : "err";
    const content = isNode(raw.content) ? raw.content : {};
    const types = Object.keys(content);
    const json = content["application/json"];
    let detail = "";
    if (kind === "ok" && isNode(json) && isNode(json.schema)) detail = schemaBlock(doc, json.schema);
    else if (kind === "ok" && types.length > 0)
      detail = `<p class="muted">${types.map(escapeHtml).join(", ")}</p>`;
    if (kind === "ok" && isNode(json) && json.example !== undefined)
      detail += `<pre class="example">${escapeHtml(prettyJson(json.example))}</pre>`;
    const shape = kind === "err" ? ' <span class="muted">→ <code>{"error": "…"}</code></span>' : "";
    out += `<dt><span class="status ${kind}">${escapeHtml(status)}</span></dt><dd>${prose(raw.description)}${shape}${detail}</dd>`;
  }
  return `${out}</dl>`;
}

function operationBlock(doc: Node, path: string, method: string, op: Node): string {
  const id = `${method}-${path}`.replace(/[^a-z0-9]+/gi, "-");
  const access = typeof op["x-access"] === "string" ? op["x-access"] : "tenant";
  let body = "";
  if (isNode(op.requestBody) && isNode(op.requestBody.content)) {
    const content = op.requestBody.content;
    const json = content["application/json"];
    const types = Object.keys(content)
      .map((t) => `<code>${escapeHtml(t)}</code>`)
      .join(" · ");
    body = `<h4>Request body <span class="muted">${types}</span></h4>`;
    if (isNode(json) && isNode(json.schema)) body += schemaBlock(doc, json.schema);
    if (isNode(json) && json.example !== undefined)
      body += `<div class="example-label">Example</div><pre class="example">${escapeHtml(prettyJson(json.example))}</pre>`;
  }
  return `<section class="op" id="${id}">
<h3><span class="method ${escapeHtml(method)}">${escapeHtml(method.toUpperCase())}</span> <span class="path">${escapeHtml(path)}</span> <span class="access ${escapeHtml(access)}">${escapeHtml(access)}</span></h3>
<p class="summary">${prose(op.summary)}</p>
<p>${prose(op.description)}</p>
${parametersBlock(op.parameters)}${body}${responsesBlock(doc, op.responses)}
</section>`;
}

interface Entry {
  path: string;
  method: string;
  op: Node;
}

function entriesByTag(doc: Node): Map<string, Entry[]> {
  const byTag = new Map<string, Entry[]>();
  if (Array.isArray(doc.tags)) for (const t of doc.tags) if (isNode(t)) byTag.set(String(t.name), []);
  const paths = isNode(doc.paths) ? doc.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isNode(item)) continue;
    for (const method of METHOD_ORDER) {
      const op = item[method];
      if (!isNode(op)) continue;
      const tag = Array.isArray(op.tags) && typeof op.tags[0] === "string" ? op.tags[0] : "Other";
      const list = byTag.get(tag) ?? [];
      list.push({ path, method, op });
      byTag.set(tag, list);
    }
  }
  return byTag;
}

export function renderDocs(doc: Node): string {
  const info = isNode(doc.info) ? doc.info : {};
  const title = typeof info.title === "string" ? info.title : "API";
  const byTag = entriesByTag(doc);
  let nav = "";
  let main = "";
  for (const [tag, entries] of byTag) {
    if (entries.length === 0) continue;
    nav += `<div class="nav-tag">${escapeHtml(tag)}</div>`;
    main += `<h2 id="tag-${escapeHtml(tag)}">${escapeHtml(tag)}</h2>`;
    for (const { path, method, op } of entries) {
      const id = `${method}-${path}`.replace(/[^a-z0-9]+/gi, "-");
      nav += `<a href="#${id}"><span class="method ${method}">${method.toUpperCase()}</span> ${escapeHtml(path)}</a>`;
      main += operationBlock(doc, path, method, op);
    }
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · API reference</title><style>${DOCS_CSS}</style></head>
<body><nav><div class="brand">${escapeHtml(title)}</div><div class="muted links">API ${escapeHtml(String(info.version ?? ""))} · <a href="/openapi.json">openapi.json</a> · <a href="/">dashboard</a></div>${nav}</nav>
<main><header><h1>${escapeHtml(title)} <span class="muted">API reference</span></h1>
<p class="lead">${prose(info.summary)}</p><p>${prose(info.description)}</p>
<div class="note"><b>Authentication.</b> When the service has the <code>API_TOKENS</code> secret, send <code>Authorization: Bearer &lt;token&gt;</code>. Routes marked <span class="access tenant">tenant</span> need a token covering the tenant, <span class="access admin">admin</span> an admin token; <span class="access public">public</span> ones need none.</div>
<div class="note"><b>64-bit integers.</b> Fields of format <code>uint64</code> / <code>int64</code> are exact at any size: JSON writes them as integer literals (parse ids above 2<sup>53</sup> with a big-integer-aware parser, or ask for <code>application/msgpack</code>).</div>
</header>${main}</main></body></html>`;
}
