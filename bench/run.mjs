#!/usr/bin/env node
/**
 * `npm run bench`: bundles the TypeScript parts with esbuild (Node 20 cannot strip types), runs each
 * as a child process — core (under --expose-gc), the core's floor, http, SQLite rows, replication —
 * prints the table and the targets, and writes `bench/results.json`. Exits non-zero if a part fails;
 * a missed target is reported, not hidden, and does not fail the run.
 */
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { printReport, targetsOf } from "./report.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** CI has the shared material beside the clone, as `../shared`. */
const baseline = resolve(root, "../shared/bench/naive-tracker.mjs");
/** Inside node_modules, so that the bundles' external packages resolve from the repo. */
const out = join(root, "node_modules/.cache/slot-tracker-bench");
const RESULT_PREFIX = "@@bench ";

function runPart(name, args) {
  return new Promise((resolvePart, reject) => {
    const started = Date.now();
    process.stderr.write(`bench: ${name}…\n`);
    const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const line = stdout.split("\n").find((l) => l.startsWith(RESULT_PREFIX));
      if (code !== 0 || !line) {
        reject(new Error(`bench part "${name}" failed (exit ${code}):\n${stdout.slice(-4000)}`));
        return;
      }
      process.stderr.write(`bench: ${name} done in ${Math.round((Date.now() - started) / 1000)} s\n`);
      resolvePart(JSON.parse(line.slice(RESULT_PREFIX.length)));
    });
  });
}

if (!existsSync(baseline)) throw new Error(`baseline not found at ${baseline} (../shared beside the repo)`);
const started = Date.now();
await build({
  entryPoints: {
    core: "bench/core/main.ts",
    "core-floor": "bench/core/index-floor.ts",
    http: "bench/http/main.ts",
    rows: "bench/rows/main.ts",
    replication: "bench/replication/main.ts",
  },
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

const environment = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? "unknown",
  loadAverageAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
};
const core = await runPart("core", [
  "--expose-gc",
  "--max-old-space-size=6144",
  join(out, "core.mjs"),
  baseline,
]);
// The floor now holds both books at 100,000 live too: the same heap limit as the core part.
const coreFloor = await runPart("core floor", [
  "--max-old-space-size=6144",
  join(out, "core-floor.mjs"),
  baseline,
]);
const http = await runPart("http", [join(out, "http.mjs"), root]);
const rows = await runPart("rows", [join(out, "rows.mjs"), root]);
const replication = await runPart("replication", [join(out, "replication.mjs"), root]);

const results = { environment, core, coreFloor, http, rows, replication };
const targets = targetsOf(results);
printReport(results, targets);
writeFileSync(
  join(root, "bench/results.json"),
  `${JSON.stringify({ ...results, targets, seconds: Math.round((Date.now() - started) / 1000) }, null, 2)}\n`,
);
process.stderr.write(`bench: wrote bench/results.json in ${Math.round((Date.now() - started) / 1000)} s\n`);
