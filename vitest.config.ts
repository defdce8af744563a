import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { viteWasmModules } from "./durable-objects/core/hashing/wasm/loaders.mjs";

/**
 * The `auth` project's secret: a tenant's frontend, that tenant's registrar (admin for its tenant
 * only), another tenant, and operators with every tenant. Tests find each token by its name.
 */
const API_TOKENS = JSON.stringify({
  "tok-acme-3f9c2a": { tenants: ["acme"], name: "acme" },
  "tok-acme-admin-81d0e4": { tenants: ["acme"], admin: true, name: "acmeAdmin" },
  "tok-globex-5b7a19": { tenants: ["globex"], name: "globex" },
  "tok-ops-c64e02": { tenants: ["*"], admin: true, name: "ops" },
});

/**
 * The seed of every fast-check property (`test/fast-check-seed.ts`): fixed, so that a run draws the
 * same cases on every machine; `FC_SEED=<n> npm test` explores others, and a failure prints its seed.
 */
const FC_SEED = JSON.stringify(Number(process.env.FC_SEED ?? 20261201));

/**
 * The tests that need requests to expire, or leases to lapse, within seconds with the real alarm:
 * they run in the `expiry` project.
 */
const EXPIRY_TESTS = ["test/workers/expiry.test.ts", "test/workers/lease-expiry.test.ts"];

export default defineConfig({
  test: {
    reporters: ["default", ["json", { outputFile: "test-artifacts/vitest.json" }]],
    // Timeouts only stop a hung test: each project's is several times the slowest of its tests on a
    // loaded 2-core machine (the slowest of a run of `npm run test:repeat` under two busy loops and
    // the soak: 18 s in workers, 16 s in auth, 7 s in unit), so a machine 4× slower still passes.
    // Pool teardown can outlast vitest's default on a busy machine.
    teardownTimeout: 60_000,
    // The `workers` and `auth` projects log every request (`ACCESS_LOG=all`), so the tests of the log
    // see its lines for every status; the suites make thousands, and the tests of the log itself read
    // it through a console spy, which sees every line whatever is printed.
    onConsoleLog: (log) => !log.startsWith('{"level":"info"'),
    projects: [
      {
        // Node runs the Worker's WebAssembly modules too (the workers pool loads them itself).
        plugins: [viteWasmModules],
        define: { __FC_SEED__: FC_SEED },
        test: {
          name: "unit",
          environment: "node",
          testTimeout: 60_000,
          include: ["test/unit/**/*.test.ts"],
          setupFiles: ["test/fast-check-seed.ts"],
        },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            // Every request logged (`ACCESS_LOG=all`), for `logs.test.ts`. Seeded `/route`
            // randomness (the `x-slot-tracker-seed` header) is allowed here and nowhere else. Small
            // live caps, so `caps.test.ts` reaches them over HTTP (production: 50,000 requests,
            // 1,500,000 blocks). Requests live longer than any test may run (the slowest are allowed
            // 180 s), so no test that books a request races its expiry, however slow the machine;
            // expiry itself is tested in the `expiry` project.
            miniflare: {
              bindings: {
                ACCESS_LOG: "all",
                REQUEST_EXPIRY_SECONDS: "600",
                ALLOW_TEST_SEED: "1",
                MAX_LIVE_REQUESTS: "200",
                MAX_LIVE_BLOCKS: "300000",
              },
            },
          }),
        ],
        define: { __FC_SEED__: FC_SEED },
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
          exclude: EXPIRY_TESTS,
          setupFiles: ["test/fast-check-seed.ts"],
          testTimeout: 120_000,
        },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            // A short expiry, so that the real alarm removes a request within seconds.
            miniflare: { bindings: { REQUEST_EXPIRY_SECONDS: "3" } },
          }),
        ],
        test: {
          name: "expiry",
          include: EXPIRY_TESTS,
          testTimeout: 120_000,
        },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            // The `workers` project runs open (no secret); this one sets API_TOKENS as production would,
            // and logs every request, for `logs.test.ts`.
            miniflare: { bindings: { API_TOKENS, ACCESS_LOG: "all" } },
          }),
        ],
        test: {
          name: "auth",
          include: ["test/auth/**/*.test.ts"],
          testTimeout: 120_000,
        },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            // Three replicas in one workerd: every (model, tenant) has three peer objects. A small
            // outbox cap lets a test push a peer into snapshot resync with a few dozen events.
            // Requests outlive the longest test (240 s), so none expires while a test checks it.
            miniflare: {
              bindings: {
                REPLICAS: "east,west,apac",
                REPLICA_FLUSH_MS: "10",
                REPLICA_OUTBOX_CAP: "40",
                REQUEST_EXPIRY_SECONDS: "600",
              },
            },
          }),
        ],
        test: {
          name: "replicas",
          include: ["test/replicas/**/*.test.ts"],
          testTimeout: 180_000,
        },
      },
      {
        plugins: [viteWasmModules],
        test: {
          name: "integration",
          environment: "node",
          include: ["test/integration/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
      {
        // The dashboard in headless Chromium (Debian's package, which `.ci/run` installs) against the
        // Worker under wrangler's local runtime.
        plugins: [viteWasmModules],
        test: {
          name: "browser",
          environment: "node",
          include: ["test/browser/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
