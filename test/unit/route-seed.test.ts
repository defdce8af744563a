import { describe, expect, it } from "vitest";
import type { RouteInput } from "../../durable-objects/types";
import app from "../../src/app";
import type { Env } from "../../src/env";

/** The app with a tracker that records `/route` inputs and routes everything to worker 1. */
function appWith(allowSeed: string | undefined) {
  const inputs: RouteInput[] = [];
  const stub = {
    route: async (input: RouteInput) => {
      inputs.push(input);
      const choice = {
        workerId: 1n,
        dpRank: 0,
        requestId: input.requestId,
        mode: "kv",
        cost: { logit: 0, potentialPrefillTokens: 0, potentialDecodeBlocks: 0, overlapBlocks: 0 },
      };
      return { ok: true, decode: choice, warnings: [] };
    },
  };
  const env = {
    TRACKER: { getByName: () => stub },
    DIRECTORY: { getByName: () => ({}) },
    REPLICAS: "primary",
    REQUEST_EXPIRY_SECONDS: "300",
    ...(allowSeed !== undefined && { ALLOW_TEST_SEED: allowSeed }),
  } as unknown as Env;
  const route = (headers: Record<string, string>) =>
    app.request(
      "/route",
      {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ model_name: "m", request_id: "r", sequence_hashes: [1] }),
      },
      env,
    );
  return { route, inputs };
}

describe("the x-slot-tracker-seed header", () => {
  it("is refused, naming the header, where ALLOW_TEST_SEED is not 1 (production)", async () => {
    for (const allow of [undefined, "0", "true"]) {
      const { route, inputs } = appWith(allow);
      const res = await route({ "x-slot-tracker-seed": "7" });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toContain("x-slot-tracker-seed");
      expect(inputs).toEqual([]);
    }
  });

  it("seeds the call where ALLOW_TEST_SEED is 1, and is absent from calls that do not send it", async () => {
    const { route, inputs } = appWith("1");
    expect((await route({ "x-slot-tracker-seed": "4294967295" })).status).toBe(201);
    expect((await route({})).status).toBe(201);
    expect(inputs.map((i) => i.seed)).toEqual([4294967295, undefined]);
    expect((await route({ "x-slot-tracker-seed": "4294967296" })).status).toBe(400);
    expect((await route({ "x-slot-tracker-seed": "-1" })).status).toBe(400);
  });
});
