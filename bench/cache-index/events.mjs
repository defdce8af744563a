#!/usr/bin/env node
/**
 * `node bench/cache-index/events.mjs`: what the engine-event cache index costs (`events.ts`),
 * bundled as `bench/run.mjs` bundles its parts and run under --expose-gc. Prints its table and its
 * `@@bench` line; writes no results file.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { bundle, out, root } from "../build.mjs";

await bundle({ "cache-index-events": "bench/cache-index/events.ts" });
const { status } = spawnSync(
  process.execPath,
  ["--expose-gc", "--max-old-space-size=6144", join(out, "cache-index-events.mjs")],
  { cwd: root, stdio: "inherit" },
);
process.exit(status ?? 1);
