/**
 * `npm run soak`: `wrangler dev` with three replicas (east, west, apac) and a fresh state directory,
 * a sustained mixed load for SOAK_SECONDS (default 300) from SOAK_CONCURRENCY client loops (default
 * 16), then, once replication is quiet, checks that every replica's /workers and /loads equal an
 * independent model of the acknowledged operations and each other, that no answer was a 5xx, and that
 * workerd's memory stayed flat. Prints `N passed, M failed` last and exits non-zero on a failure.
 *
 * Flat memory: after a warm-up (30 s, or longer until the live requests first reach 90% of their
 * target, SOAK_LIVE_TARGET per tracker, at most half the run), the median RSS of the last third of
 * the samples is at most SOAK_MEMORY_GROWTH (default 1.2) times the median of the first third.
 * Requests never expire during the run (REQUEST_EXPIRY_SECONDS=86400), so the model is exact. Before
 * the load, SOAK_WARM_REQUESTS (default 40,000) cheap reads take the local runtime's own growth out
 * of the window (see `warm`).
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { compare, quiesce, trend } from "./checks.mjs";
import { findWorkerd, rssOf, startDev } from "./dev-server.mjs";
import { Load } from "./load.mjs";
import { show, TrackerModel } from "./model.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const SECONDS = Number(process.env.SOAK_SECONDS ?? 300);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 16);
const LIVE_TARGET = Number(process.env.SOAK_LIVE_TARGET ?? 800);
const GROWTH = Number(process.env.SOAK_MEMORY_GROWTH ?? 1.2);
/** Reads sent before the load, so the local runtime's own per-request growth is mostly behind us. */
const WARM_REQUESTS = Number(process.env.SOAK_WARM_REQUESTS ?? 40_000);
const WARMUP_S = Math.min(30, SECONDS / 4);
const SAMPLE_MS = 5_000;
const REPLICAS = ["east", "west", "apac"];

let seed = Number(process.env.SOAK_SEED ?? Date.now() % 1e9);
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return seed / 2_147_483_648;
};
const u64 = () => (BigInt(Math.floor(random() * 2 ** 32)) << 32n) | BigInt(Math.floor(random() * 2 ** 32));

/** Tracked trackers: workers registered once, at one replica, before the load. */
const TRACKERS = [
  {
    key: "a",
    model: "llama-3-70b",
    tenant: "default",
    home: "east",
    workers: [
      [1n, 0n, 4n],
      [2n, 0n, 4n],
      [2n ** 64n - 1n, 4n, 2n],
    ],
  },
  {
    key: "b",
    model: "llama-3-70b",
    tenant: "acme",
    home: "west",
    workers: [
      [7n, 0n, 2n],
      [9_007_199_254_740_993n, 0n, 8n],
    ],
  },
  {
    key: "c",
    model: "mistral-7b",
    tenant: "default",
    home: "apac",
    workers: [
      [3n, 0n, 1n],
      [4n, 0n, 1n],
      [5n, 2n, 3n],
      [6n, 0n, 1n],
    ],
  },
].map((t) => ({
  ...t,
  model: new TrackerModel(t.model, t.tenant, 16n),
  prefixes: Array.from({ length: 6 }, () => Array.from({ length: 24 }, u64)),
}));

const churnTracker = {
  model: new TrackerModel("churn", "default", 16n),
  workers: [100n, 101n, 102n, 103n].map((id, i) => ({ id, key: `churn-${id}`, home: REPLICAS[i % 3] })),
};

const checks = [];
function check(name, ok, detail = "") {
  checks.push({ name, ok });
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${detail ? ` — ${detail}` : ""}`);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.floor(s.length / 2)];
};
const mb = (bytes) => (bytes / 2 ** 20).toFixed(1);

async function main() {
  console.log(`soak: ${SECONDS} s, ${CONCURRENCY} clients, seed ${seed}`);
  const dev = await startDev(root, { REPLICAS: REPLICAS.join(","), REQUEST_EXPIRY_SECONDS: "86400" });
  console.log(`wrangler dev on ${dev.url}, state in ${dev.persist}`);
  try {
    await run(dev);
  } finally {
    await dev.stop();
  }
  const failed = checks.filter((c) => !c.ok).length;
  // The state is kept for a look when something failed.
  if (failed === 0) rmSync(dev.persist, { recursive: true, force: true });
  else console.log(`state and wrangler log kept in ${dev.persist}`);
  console.log(`${checks.length - failed} passed, ${failed} failed`);
  process.exitCode = failed === 0 ? 0 : 1;
}

async function run(dev) {
  const load = new Load({
    url: dev.url,
    replicas: REPLICAS,
    trackers: TRACKERS,
    churnTracker,
    liveTarget: LIVE_TARGET,
    random,
  });
  for (const t of TRACKERS) {
    for (const [id, dpStart, dpSize] of t.workers) {
      const body = {
        worker_id: id,
        model_name: t.model.model,
        tenant_id: t.model.tenant,
        block_size: 16,
        dp_start: dpStart,
        dp_size: dpSize,
      };
      const answer = await load.call("register", t.home, "POST", "/register", body);
      if (answer.status !== 201) throw new Error(`register ${show(body)} → ${answer.status} ${answer.value}`);
      t.model.register(id, dpStart, dpSize);
    }
  }
  await quiesce(load, [...TRACKERS.map((t) => t.model), churnTracker.model], REPLICAS, 60_000);
  let pid = findWorkerd(dev.pid);
  await warm(load, pid);

  const memory = [];
  /** When the live requests first reached 90% of their target, s into the load. */
  let steadyAt;
  const started = Date.now();
  const sampler = setInterval(() => {
    pid = pid !== undefined && rssOf(pid) !== undefined ? pid : findWorkerd(dev.pid);
    const rss = pid === undefined ? undefined : rssOf(pid);
    const t = (Date.now() - started) / 1000;
    const live = TRACKERS.reduce((n, tr) => n + tr.model.requests.size, 0);
    if (rss !== undefined) memory.push({ t, rss, live });
    if (steadyAt === undefined && live >= 0.9 * LIVE_TARGET * TRACKERS.length) steadyAt = t;
    const { ops, serverErrors, transportErrors, unexpected } = load.stats;
    console.log(
      `t=${t.toFixed(0)}s ops=${ops} (${(ops / t).toFixed(0)}/s) live=${live} 5xx=${serverErrors} errors=${transportErrors} unexpected=${unexpected} workerd=${rss === undefined ? "?" : `${mb(rss)} MB`}`,
    );
  }, SAMPLE_MS);
  const deadline = started + SECONDS * 1000;
  await Promise.all(Array.from({ length: CONCURRENCY }, () => load.run(() => Date.now() >= deadline)));
  clearInterval(sampler);
  const elapsed = (Date.now() - started) / 1000;

  const quiet = await quiesce(load, [...TRACKERS.map((t) => t.model), churnTracker.model], REPLICAS, 120_000);
  const { stats } = load;
  console.log(
    `load: ${stats.ops} operations in ${elapsed.toFixed(0)} s (${(stats.ops / elapsed).toFixed(0)}/s); by kind ${JSON.stringify(stats.byKind)}; statuses ${JSON.stringify(stats.statuses)}`,
  );
  for (const sample of load.samples) console.log(`  unexpected: ${sample}`);
  check("no 5xx answer", stats.serverErrors === 0, `${stats.serverErrors} of ${stats.ops}`);
  check("no connection error or timeout", stats.transportErrors === 0, `${stats.transportErrors}`);
  check(
    "every operation got the status its model predicts",
    stats.unexpected === 0,
    `${stats.unexpected} unexpected`,
  );
  check("replication quiesced (no event queued, every peer ok)", quiet.ok, quiet.detail);

  for (const t of [...TRACKERS, churnTracker]) await compare(load, t.model, REPLICAS, check);

  const warmup = Math.min(Math.max(WARMUP_S, steadyAt ?? SECONDS), SECONDS / 2);
  const steady = memory.filter((m) => m.t >= warmup);
  const third = Math.max(1, Math.floor(steady.length / 3));
  const first = median(steady.slice(0, third).map((m) => m.rss));
  const last = median(steady.slice(-third).map((m) => m.rss));
  const max = Math.max(...memory.map((m) => m.rss));
  const slope = trend(steady);
  check(
    `workerd memory flat (median of last third ≤ ${GROWTH} × median of first third, after ${warmup.toFixed(0)} s)`,
    steady.length >= 3 && last <= first * GROWTH,
    `first ${mb(first)} MB, last ${mb(last)} MB (×${(last / first).toFixed(2)}), max ${mb(max)} MB, trend ${((slope * 60) / 2 ** 20).toFixed(2)} MB/min over ${steady.length} samples`,
  );
  check(
    "wrangler dev still serving",
    dev.alive() && (await load.call("health", "east", "GET", "/health")).status === 200,
  );

  mkdirSync(join(root, "test-artifacts"), { recursive: true });
  writeFileSync(
    join(root, "test-artifacts/soak.json"),
    `${JSON.stringify({ seconds: elapsed, concurrency: CONCURRENCY, stats, memory: { firstThirdMedianMB: +mb(first), lastThirdMedianMB: +mb(last), maxMB: +mb(max), trendMBPerMin: +((slope * 60) / 2 ** 20).toFixed(2), samples: memory }, live: TRACKERS.map((t) => t.model.requests.size), checks }, null, 2)}\n`,
  );
}

/**
 * Local workerd's resident memory grows with every request it serves, whatever the Worker does (a
 * Worker answering an empty 200 went from 58 to 270 MB over 16,000 requests and levelled off near
 * 380 MB after 40,000; one calling a trivial Durable Object grew faster). Cheap reads through the
 * tracker objects first take most of that growth out of the measured window.
 */
async function warm(load, pid) {
  const started = Date.now();
  const before = rssOf(pid);
  let sent = 0;
  const reader = async () => {
    while (sent < WARM_REQUESTS) {
      sent++;
      const t = TRACKERS[sent % TRACKERS.length];
      const q = `?model_name=${encodeURIComponent(t.model.model)}&tenant_id=${t.model.tenant}`;
      const answer = await load.call("warm-up", REPLICAS[sent % 3], "GET", `/loads${q}`);
      if (answer.status !== 200) load.unexpected("warm-up", answer.status, answer.value);
    }
  };
  await Promise.all(Array.from({ length: 32 }, reader));
  const { serverErrors, transportErrors, unexpected } = load.stats;
  check(
    "warm-up reads all answered 200",
    serverErrors + transportErrors + unexpected === 0 && (load.stats.statuses[200] ?? 0) >= WARM_REQUESTS,
  );
  load.resetStats();
  console.log(
    `warm-up: ${WARM_REQUESTS} reads in ${((Date.now() - started) / 1000).toFixed(0)} s; workerd ${mb(before)} → ${mb(rssOf(pid))} MB`,
  );
}

main().catch((error) => {
  console.error(error);
  console.log(
    `${checks.filter((c) => c.ok).length} passed, ${checks.filter((c) => !c.ok).length + 1} failed`,
  );
  process.exitCode = 1;
});
