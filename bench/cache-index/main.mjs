#!/usr/bin/env node
/**
 * `node bench/cache-index/main.mjs`: the cache-index part of `npm run bench` (`measure.ts`) on its
 * own, bundled as `bench/run.mjs` bundles it and run under --expose-gc. Prints its table and its
 * `@@bench` line; writes no results file.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { bundle, out, root } from "../build.mjs";

await bundle({ "cache-index": "bench/cache-index/measure.ts" });
const { status } = spawnSync(
  process.execPath,
  ["--expose-gc", "--max-old-space-size=6144", join(out, "cache-index.mjs")],
  { cwd: root, stdio: "inherit" },
);
process.exit(status ?? 1);
