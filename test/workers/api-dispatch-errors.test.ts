/**
 * Requests no handler serves: an unknown route is 404, a known route with the wrong method 405, and an
 * unknown `x-slot-tracker-replica` 400, each changing nothing; a known replica is served.
 */
import { describe, expect, it } from "vitest";
import { call, expectError, get, post, SeededTracker, SLOW_TEST_MS } from "./api-http";
import { validBodies } from "./valid-bodies";

describe("routes and methods", () => {
  it(
    "answers an unknown route with 404 route not found",
    async () => {
      const t = await SeededTracker.create();
      const body = JSON.stringify(validBodies(t.model)["/register"]);
      for (const [method, path] of [
        ["GET", "/nope"],
        ["POST", "/nope"],
        ["POST", "/register/extra"],
        ["POST", "/v1/register"],
        ["POST", "/Register"],
        ["GET", "/Workers"],
        ["DELETE", "/tracker"],
      ] as const) {
        const init = method === "POST" ? { body } : {};
        await t.unchangedBy(`${method} ${path}`, () =>
          expectError(
            call(method, path, { ...init, headers: { "content-type": "application/json" } }),
            404,
            "route not found",
          ),
        );
      }
    },
    SLOW_TEST_MS,
  );

  it(
    "answers a known route with the wrong method with 405 method not allowed",
    async () => {
      const t = await SeededTracker.create();
      const bodies = validBodies(t.model);
      for (const [method, path] of [
        ["GET", "/register"],
        ["PUT", "/register"],
        ["GET", "/unregister"],
        ["DELETE", "/unregister"],
        ["GET", "/add"],
        ["PATCH", "/prefill_complete"],
        ["GET", "/free"],
        ["PUT", "/free"],
        ["POST", "/workers"],
        ["DELETE", "/workers"],
        ["POST", "/loads"],
        ["GET", "/potential_loads"],
        ["POST", "/health"],
      ] as const) {
        const init = method === "GET" ? {} : { body: JSON.stringify(bodies[path] ?? bodies["/free"]) };
        await t.unchangedBy(`${method} ${path}`, () =>
          expectError(
            call(method, path, { ...init, headers: { "content-type": "application/json" } }),
            405,
            "method not allowed",
          ),
        );
      }
    },
    SLOW_TEST_MS,
  );
});

describe("replica selection", () => {
  it(
    "answers 400 to an unknown x-slot-tracker-replica and serves a known one",
    async () => {
      const t = await SeededTracker.create();
      const replica = { "x-slot-tracker-replica": "mars" };
      const bodies = validBodies(t.model);
      for (const path of Object.keys(bodies)) {
        await t.unchangedBy(`${path} on replica mars`, () =>
          expectError(post(path, bodies[path], replica), 400, /replica.*mars|mars.*replica/),
        );
      }
      await t.unchangedBy("listings on replica mars", async () => {
        await expectError(get("/workers", { model_name: t.model }, replica), 400, /mars/);
        await expectError(get("/loads", {}, replica), 400, /mars/);
      });
      const known = await get("/workers", { model_name: t.model }, { "x-slot-tracker-replica": "primary" });
      expect(known.status).toBe(200);
      expect(await known.text()).toContain(`{"worker_id":2,"model_name":"${t.model}"`);
    },
    SLOW_TEST_MS,
  );
});
