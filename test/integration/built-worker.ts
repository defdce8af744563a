/**
 * The Worker as it deploys, served on a local port: `wrangler deploy --dry-run` bundles it, and
 * Miniflare runs the bundle with the bindings, Durable Objects and compatibility settings wrangler
 * reads from wrangler.toml, state in memory. This is the same workerd `wrangler dev` runs, but
 * without dev's proxy hop, which under the pinned wrangler now and then answers a POST 503 "Your
 * worker restarted mid-request" without delivering it (cloudflare/workers-sdk#14641): a test whose
 * client is a separate process (the relay) must not meet that.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Log, LogLevel, Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { miniflareWasmRules } from "../../durable-objects/core/hashing/wasm/loaders.mjs";

const root = join(import.meta.dirname, "../..");

export interface BuiltWorker {
  url: URL;
  dispose(): Promise<void>;
}

export async function startBuiltWorker(vars: Record<string, string> = {}): Promise<BuiltWorker> {
  const work = mkdtempSync(join(tmpdir(), "slot-tracker-built-"));
  const dist = join(work, "dist");
  execFileSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", dist], { cwd: root, stdio: "pipe" });
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
    host: "127.0.0.1",
    port: 0,
    log: new Log(LogLevel.WARN),
    // The access log's lines (at "info") are left out, as the vitest config does.
    handleRuntimeStdio(stdout, stderr) {
      stdout.resume();
      stderr.pipe(process.stderr);
    },
  });
  const url = await mf.ready;
  return {
    url,
    dispose: async () => {
      await mf.dispose();
      rmSync(work, { recursive: true, force: true });
    },
  };
}
