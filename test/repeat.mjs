#!/usr/bin/env node
/**
 * `npm run test:repeat -- [N] [vitest args…]`: runs the whole suite (`vitest run`) N times (default
 * 10), one run after another, and stops at the first run that fails, printing its number and the
 * tests that failed (from vitest's JSON report). A suite that passes once but fails one run in five
 * refuses somebody's submission, so this is how a change to the tests is shown to hold. Each run's
 * output goes to `test-artifacts/repeat-run-K.log` and its JSON report (with each test's duration) to
 * `repeat-run-K.json`; only the summary line of each is printed.
 */
import { spawn } from "node:child_process";
import { copyFileSync, createWriteStream, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const artifacts = join(root, "test-artifacts");
const args = process.argv.slice(2);
const runs = /^\d+$/.test(args[0] ?? "") ? Number(args.shift()) : 10;
if (runs < 1) throw new Error("the number of runs must be at least 1");

function runOnce(k) {
  const log = join(artifacts, `repeat-run-${k}.log`);
  const out = createWriteStream(log);
  const vitest = join(root, "node_modules/vitest/vitest.mjs");
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [vitest, "run", ...args], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, FORCE_COLOR: "0" },
    });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    child.on("error", fail);
    child.on("close", (code) => out.end(() => done({ code, log })));
  });
}

/** The failed tests of the last run, from the JSON report `vitest.config.ts` asks for. */
function failuresOf() {
  try {
    const report = JSON.parse(readFileSync(join(artifacts, "vitest.json"), "utf8"));
    const failed = report.testResults.flatMap((file) =>
      file.assertionResults
        .filter((t) => t.status === "failed")
        .map((t) => `${file.name.replace(`${root}/`, "")} › ${t.fullName}`),
    );
    const broken = report.testResults
      .filter((file) => file.status === "failed" && file.assertionResults.every((t) => t.status !== "failed"))
      .map(
        (file) => `${file.name.replace(`${root}/`, "")} (the file failed outside its tests: ${file.message})`,
      );
    return { report, failed: [...failed, ...broken] };
  } catch (error) {
    return { report: null, failed: [`no readable report (${error.message})`] };
  }
}

mkdirSync(artifacts, { recursive: true });
const started = Date.now();
for (let k = 1; k <= runs; k++) {
  const runStarted = Date.now();
  // A run that dies before its reporter writes must not be judged by the previous run's report.
  rmSync(join(artifacts, "vitest.json"), { force: true });
  const { code, log } = await runOnce(k);
  const { report, failed } = failuresOf();
  const json = join(artifacts, "vitest.json");
  if (existsSync(json)) copyFileSync(json, join(artifacts, `repeat-run-${k}.json`));
  const seconds = Math.round((Date.now() - runStarted) / 1000);
  const counts = report
    ? `${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numPendingTests} skipped`
    : "no report";
  console.log(`run ${k}/${runs}: ${code === 0 ? "passed" : "FAILED"} (${counts}) in ${seconds} s`);
  if (code !== 0) {
    console.log(`run ${k} failed; its output: ${log}`);
    for (const name of failed) console.log(`  failed: ${name}`);
    if (failed.length === 0)
      console.log("  no test failed in the report: an unhandled error or teardown fault, see the log");
    process.exit(1);
  }
}
console.log(`all ${runs} runs passed in ${Math.round((Date.now() - started) / 1000)} s`);
