#!/usr/bin/env node
/**
 * `npm run bench`: bundles the TypeScript parts (`build.mjs`), runs each as a child process — core
 * (under --expose-gc), the core's floor, http, SQLite rows, replication, prompt hashing, the cache
 * index (under --expose-gc) — prints the table and the targets, and writes `bench/results.json`.
 * Exits non-zero if a part fails; a missed target is reported, not hidden, and does not fail the run.
 *
 * `node bench/run.mjs <part>…` (`hashing`, `cache-index`, `core`, …) runs only those parts and
 * prints their figures; it writes no results file, so that `bench/results.json` is always one whole
 * run.
 */
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { bundle, out, root } from "./build.mjs";
import { printPartial, printReport, targetsOf } from "./report.mjs";

/** CI has the shared material beside the clone, as `../shared`. */
const baseline = resolve(root, "../shared/bench/naive-tracker.mjs");
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

/** Each part: its bundle's entry point, its key in the results, and how its process is started. */
const PARTS = [
  {
    name: "core",
    key: "core",
    entry: "bench/core/main.ts",
    args: (file) => ["--expose-gc", "--max-old-space-size=6144", file, baseline],
  },
  // The floor now holds both books at 100,000 live too: the same heap limit as the core part.
  {
    name: "core floor",
    key: "coreFloor",
    entry: "bench/core/index-floor.ts",
    args: (file) => ["--max-old-space-size=6144", file, baseline],
  },
  { name: "http", key: "http", entry: "bench/http/main.ts", args: (file) => [file, root] },
  { name: "rows", key: "rows", entry: "bench/rows/main.ts", args: (file) => [file, root] },
  {
    name: "replication",
    key: "replication",
    entry: "bench/replication/main.ts",
    args: (file) => [file, root],
  },
  { name: "hashing", key: "hashing", entry: "bench/hashing/measure.ts", args: (file) => [file] },
  {
    name: "cache-index",
    key: "cacheIndex",
    entry: "bench/cache-index/measure.ts",
    args: (file) => ["--expose-gc", "--max-old-space-size=6144", file],
  },
  {
    name: "selection-http",
    key: "selectionHttp",
    entry: "bench/selection/http.ts",
    args: (file) => [file, root],
  },
  {
    name: "selection-core",
    key: "selectionCore",
    entry: "bench/selection/latency.ts",
    args: (file) => ["--expose-gc", "--max-old-space-size=6144", file],
  },
  {
    name: "kv-events-core",
    key: "kvEventsCore",
    entry: "bench/kv-events/core.ts",
    args: (file) => ["--expose-gc", "--max-old-space-size=6144", file],
  },
  {
    name: "routing-quality",
    key: "routingQuality",
    entry: "bench/routing/quality.ts",
    args: (file) => [file],
  },
];
const bundleName = (part) => part.name.replace(/ /g, "-");

const asked = process.argv.slice(2);
const unknown = asked.filter((name) => !PARTS.some((p) => p.name === name || bundleName(p) === name));
if (unknown.length > 0) {
  throw new Error(
    `unknown bench part(s): ${unknown.join(", ")} (parts: ${PARTS.map((p) => p.name).join(", ")})`,
  );
}
const parts =
  asked.length === 0 ? PARTS : PARTS.filter((p) => asked.includes(p.name) || asked.includes(bundleName(p)));
const needsBaseline = parts.some((p) => p.key === "core" || p.key === "coreFloor");
if (needsBaseline && !existsSync(baseline)) {
  throw new Error(`baseline not found at ${baseline} (../shared beside the repo)`);
}
const started = Date.now();
await bundle(Object.fromEntries(parts.map((p) => [bundleName(p), p.entry])));

const environment = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? "unknown",
  loadAverageAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
};
const results = { environment };
for (const part of parts) {
  results[part.key] = await runPart(part.name, part.args(join(out, `${bundleName(part)}.mjs`)));
}

if (asked.length > 0) {
  printPartial(results);
  process.stderr.write("bench: only some parts ran, so bench/results.json is left as it was\n");
} else {
  const targets = targetsOf(results);
  printReport(results, targets);
  writeFileSync(
    join(root, "bench/results.json"),
    `${JSON.stringify({ ...results, targets, seconds: Math.round((Date.now() - started) / 1000) }, null, 2)}\n`,
  );
  process.stderr.write(`bench: wrote bench/results.json in ${Math.round((Date.now() - started) / 1000)} s\n`);
}
