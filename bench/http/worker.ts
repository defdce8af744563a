/**
 * A Worker (the service's from `wrangler.toml`, or the platform floor of `bench/floor`), started by
 * wrangler's `unstable_startWorker` on 127.0.0.1 with on-disk local state in a fresh temp dir, for
 * the benchmarks that drive it over HTTP. `vars` override the configuration's (as `wrangler dev
 * --var` would).
 *
 * It runs from a copy of the sources taken at start: wrangler's bundler watches them whatever
 * `dev.watch` says, and a file saved mid-run would reload the runtime, failing the POSTs in flight
 * (503 "Your worker restarted mid-request") and measuring two versions of the code in one run.
 */
import { cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unstable_startWorker } from "wrangler";

export interface LocalWorker {
  /** Base URL, ending in `/`. */
  url: string;
  /** Stops the runtime and deletes its state. */
  stop(): Promise<void>;
}

/** What a Worker's bundle is built from: a folder with a `wrangler.toml`, and the entries copied. */
export interface WorkerSources {
  dir: string;
  entries: string[];
}

/** The service's own Worker. */
const SERVICE: WorkerSources = {
  dir: ".",
  entries: ["wrangler.toml", "package.json", "tsconfig.json", "src", "durable-objects"],
};

/**
 * Starts the Worker of `from` (by default the service's; `from.dir` is relative to `root`, the repo,
 * whose `node_modules` it uses).
 */
export async function startLocalWorker(
  root: string,
  vars: Record<string, string> = {},
  from: WorkerSources = SERVICE,
): Promise<LocalWorker> {
  const state = mkdtempSync(join(tmpdir(), "slot-tracker-bench-"));
  const sources = join(state, "sources");
  for (const entry of from.entries) {
    cpSync(join(root, from.dir, entry), join(sources, entry), { recursive: true });
  }
  symlinkSync(join(root, "node_modules"), join(sources, "node_modules"));
  const worker = await unstable_startWorker({
    config: join(sources, "wrangler.toml"),
    bindings: Object.fromEntries(
      Object.entries(vars).map(([name, value]) => [name, { type: "plain_text", value }]),
    ),
    dev: {
      server: { hostname: "127.0.0.1", port: 0 },
      inspector: false,
      persist: join(state, "data"),
      logLevel: "warn",
      watch: false,
      remote: false,
    },
  });
  const stop = async () => {
    await worker.dispose();
    rmSync(state, { recursive: true, force: true });
  };
  try {
    await worker.ready;
    return { url: (await worker.url).toString(), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The platform floor's Worker (`bench/floor`). */
const FLOOR: WorkerSources = { dir: "bench/floor", entries: ["wrangler.toml", "worker.ts"] };

/**
 * Starts the service's Worker and then the platform floor's, runs `measure` with their base URLs,
 * and stops both whatever it did.
 */
export async function withServiceAndFloor<T>(
  root: string,
  measure: (serviceUrl: string, floorUrl: string) => Promise<T>,
): Promise<T> {
  const workers: LocalWorker[] = [];
  try {
    const service = await startLocalWorker(root);
    workers.push(service);
    const floor = await startLocalWorker(root, {}, FLOOR);
    workers.push(floor);
    return await measure(service.url, floor.url);
  } finally {
    for (const worker of workers) await worker.stop();
  }
}

/** POSTs `body` to `url` + `path`; any non-2xx answer fails the benchmark. */
export async function post(
  url: string,
  path: string,
  body: string | Buffer,
  type = "application/json",
  headers: Record<string, string> = {},
): Promise<Response> {
  const res = await fetch(`${url}${path.slice(1)}`, {
    method: "POST",
    body,
    headers: { "content-type": type, ...headers },
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res;
}
