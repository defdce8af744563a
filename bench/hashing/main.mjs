#!/usr/bin/env node
/**
 * `node bench/hashing/main.mjs`: the prompt-hashing part of `npm run bench` (`measure.ts`) on its
 * own, bundled as `bench/run.mjs` bundles it. Prints its table and its `@@bench` line; writes no
 * results file.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { bundle, out, root } from "../build.mjs";

await bundle({ hashing: "bench/hashing/measure.ts" });
const { status } = spawnSync(process.execPath, [join(out, "hashing.mjs")], { cwd: root, stdio: "inherit" });
process.exit(status ?? 1);
