#!/usr/bin/env node
/**
 * The soak's runtime: the Worker as `wrangler deploy --dry-run` bundles it, in Miniflare (the same
 * workerd `wrangler dev` runs) with the bindings, Durable Objects and compatibility settings that
 * wrangler reads from wrangler.toml (`unstable_getMiniflareWorkerOptions`), state on disk, and
 * workerd's inspector on a port for the heap readings.
 *
 * Why not `wrangler dev` itself: its ProxyWorker forwards every request to the Worker over a
 * pooled HTTP connection, and with the pinned wrangler a request written just as that connection's
 * 5 s idle timeout fires is lost and answered 503 "Your worker restarted mid-request" although the
 * Worker never restarted and never saw it (cloudflare/workers-sdk#14641, #15252). At the soak's
 * steady rate that is a few requests an hour, and each one is a failure of the soak that the
 * service did not cause. Miniflare's own entry serves the port without that hop.
 *
 * `node bench/soak/runtime.mjs <port> <inspector-port> <persist-dir> <vars-json>`; prints
 * `ready <url>` once serving, and disposes on SIGTERM.
 */
import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Log, LogLevel, Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { miniflareWasmRules } from "../../durable-objects/core/hashing/wasm/loaders.mjs";

const root = resolve(fileURLToPath(import.meta.url), "../../..");
const [port, inspectorPort, persist, varsJson] = process.argv.slice(2);
const vars = JSON.parse(varsJson);

const dist = join(persist, "dist");
execFileSync(
  process.execPath,
  [join(root, "node_modules/wrangler/bin/wrangler.js"), "deploy", "--dry-run", "--outdir", dist],
  {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1" },
  },
);

const { workerOptions } = unstable_getMiniflareWorkerOptions(join(root, "wrangler.toml"));
const mf = new Miniflare({
  ...workerOptions,
  name: "edge-slot-tracker",
  modules: true,
  scriptPath: join(dist, "index.js"),
  // Module names are taken relative to this root: the bundle's directory.
  modulesRoot: dist,
  modulesRules: miniflareWasmRules,
  bindings: { ...workerOptions.bindings, ...vars },
  durableObjectsPersist: join(persist, "do"),
  host: "127.0.0.1",
  port: Number(port),
  inspectorPort: Number(inspectorPort),
  log: new Log(LogLevel.WARN),
  // The Worker's access-log lines are at "info": kept out, as `--log-level warn` did.
  handleRuntimeStdio(stdout, stderr) {
    for (const [stream, out] of [
      [stdout, process.stdout],
      [stderr, process.stderr],
    ]) {
      createInterface({ input: stream }).on("line", (line) => {
        if (!line.startsWith('{"level":"info"')) out.write(`${line}\n`);
      });
    }
  },
});
const url = await mf.ready;
console.log(`ready ${url}`);

process.once("SIGTERM", () => {
  void mf.dispose().finally(() => process.exit(0));
});
