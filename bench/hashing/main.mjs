#!/usr/bin/env node
/**
 * `node bench/hashing/main.mjs`: the prompt-hashing benchmark (`measure.ts`), bundled with esbuild
 * first, as `bench/run.mjs` does for its parts (Node 20 cannot strip types). Standalone: it is not a
 * part of `npm run bench` and writes no results file.
 */
import { spawnSync } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** Inside node_modules, so that the bundle's external packages resolve from the repo. */
const out = join(root, "node_modules/.cache/slot-tracker-bench");
await build({
  entryPoints: { hashing: "bench/hashing/measure.ts" },
  absWorkingDir: root,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  outdir: out,
  outExtension: { ".js": ".mjs" },
  logLevel: "warning",
});
const { status } = spawnSync(process.execPath, [join(out, "hashing.mjs")], { cwd: root, stdio: "inherit" });
process.exit(status ?? 1);
