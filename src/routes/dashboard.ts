/** `GET /`: the live dashboard. The page is public; its script sends the operator's token to the API. */
import { Hono } from "hono";
import { DASHBOARD_HTML } from "../dashboard/page";
import type { AppEnv } from "../env";

export const dashboard = new Hono<AppEnv>().get("/", (c) =>
  c.body(DASHBOARD_HTML, 200, {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-cache",
    // Inline style and script only, data from this origin only, never framed.
    "content-security-policy":
      "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'",
    "referrer-policy": "no-referrer",
  }),
);
