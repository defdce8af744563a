import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    reporters: ["default", ["json", { outputFile: "test-artifacts/vitest.json" }]],
    // Pool teardown can outlast vitest's default on a busy machine.
    teardownTimeout: 60_000,
    projects: [
      {
        test: {
          name: "unit",
          environment: "node",
          include: ["test/unit/**/*.test.ts"],
        },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            // Short expiry so expiry runs in seconds; seeded `/route` randomness (the
            // `x-slot-tracker-seed` header) is allowed here and nowhere else. Small live caps, so
            // `caps.test.ts` reaches them over HTTP (production: 200,000 requests, 2,000,000 blocks).
            miniflare: {
              bindings: {
                REQUEST_EXPIRY_SECONDS: "3",
                ALLOW_TEST_SEED: "1",
                MAX_LIVE_REQUESTS: "200",
                MAX_LIVE_BLOCKS: "300000",
              },
            },
          }),
        ],
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
          testTimeout: 30_000,
        },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            // Three replicas in one workerd: every (model, tenant) has three peer objects. A small
            // outbox cap lets a test push a peer into snapshot resync with a few dozen events.
            miniflare: {
              bindings: {
                REPLICAS: "east,west,apac",
                REPLICA_FLUSH_MS: "10",
                REPLICA_OUTBOX_CAP: "40",
                REQUEST_EXPIRY_SECONDS: "120",
              },
            },
          }),
        ],
        test: {
          name: "replicas",
          include: ["test/replicas/**/*.test.ts"],
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: "integration",
          environment: "node",
          include: ["test/integration/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
