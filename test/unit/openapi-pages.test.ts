import { describe, expect, it } from "vitest";
import app from "../../src/app";
import { DASHBOARD_SCRIPT } from "../../src/dashboard/script";
import { OPERATIONS } from "../../src/docs/api-operations";
import { openApiPath } from "../../src/docs/openapi";
import { escapeHtml, prettyJson } from "../../src/docs/render";
import type { Env } from "../../src/env";

const env = { REPLICAS: "primary", REQUEST_EXPIRY_SECONDS: "300" } as unknown as Env;
const tokens = JSON.stringify({ "s3cret-admin": { tenants: ["*"], admin: true } });

describe("GET /docs", () => {
  it("renders every documented path and method into one self-contained HTML page", async () => {
    const res = await app.request("/docs", {}, env);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await res.text();
    for (const op of OPERATIONS) {
      const path = openApiPath(op.path);
      expect(html).toContain(`<span class="path">${escapeHtml(path)}</span>`);
      expect(html).toContain(`id="${`${op.method}-${path}`.replace(/[^a-z0-9]+/gi, "-")}"`);
    }
    // No external asset and no script: it must work offline and under its own CSP.
    expect(html).not.toMatch(/<script|<link|src="http|href="http/i);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
  });

  it("shows field tables with exact 64-bit bounds and the request examples", async () => {
    const html = await (await app.request("/docs", {}, env)).text();
    expect(html).toContain("<code>worker_id</code>");
    expect(html).toContain("integer (uint64)");
    expect(html).toContain("0 … 18446744073709551615");
    expect(html).toContain("&#34;worker_id&#34;: 18446744073709551557");
  });

  it("writes examples with exact bigints and escapes what it shows", () => {
    expect(prettyJson({ a: [1n << 64n, -1], b: { c: "x" } })).toBe(
      '{\n  "a": [18446744073709551616, -1],\n  "b": {\n    "c": "x"\n  }\n}',
    );
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe("&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;");
  });
});

describe("GET / (dashboard)", () => {
  it("serves a self-contained HTML page with the token field, the totals and the tracker list", async () => {
    const res = await app.request("/", {}, env);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await res.text();
    for (const id of [
      "token-form",
      "token",
      "trackers",
      "t-decode",
      "t-prefill",
      "t-live",
      "t-leases",
      "replica",
      "status",
    ]) {
      expect(html).toContain(`id="${id}"`);
    }
    expect(html).not.toMatch(/<link|src="http|href="http/i);
    expect(res.headers.get("content-security-policy")).toContain("connect-src 'self'");
  });

  it("ships a script that parses, and that never reads a 64-bit id through a rounding number", () => {
    expect(() => new Function(DASHBOARD_SCRIPT)).not.toThrow();
    expect(DASHBOARD_SCRIPT).not.toContain("${");
    expect(DASHBOARD_SCRIPT).toContain("ctx.source");
  });

  it("is public when API_TOKENS is set, like /docs and /openapi.json, while the API asks for a token", async () => {
    const secured = { ...env, API_TOKENS: tokens } as Env;
    for (const path of ["/", "/docs", "/openapi.json"]) {
      expect((await app.request(path, {}, secured)).status, path).toBe(200);
    }
    expect((await app.request("/loads", {}, secured)).status).toBe(401);
  });
});
