/** Liveness: `GET /health` answers 200 with an empty body, as Dynamo does; it touches no object. */
import { Hono } from "hono";
import type { AppEnv } from "../env";

export const health = new Hono<AppEnv>().get("/health", (c) => c.body(null, 200));
