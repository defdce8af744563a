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
 * Requests never expire during the run (REQUEST_EXPIRY_SECONDS=86400), so the model is exact.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { decode } from "@msgpack/msgpack";
import { findWorkerd, rssOf, startDev } from "./dev-server.mjs";
import { Load } from "./load.mjs";
import { exact, show, TrackerModel } from "./model.mjs";

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
  await quiesce(load, 60_000);
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

  const quiet = await quiesce(load, 120_000);
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

  for (const t of [...TRACKERS, churnTracker]) await compare(load, t.model);

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
      await load.call("warm-up", REPLICAS[sent % 3], "GET", `/loads${q}`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, reader));
  console.log(
    `warm-up: ${WARM_REQUESTS} reads in ${((Date.now() - started) / 1000).toFixed(0)} s; workerd ${mb(before)} → ${mb(rssOf(pid))} MB`,
  );
}

/** Least-squares slope of RSS over time, bytes per second. */
function trend(samples) {
  const n = samples.length;
  if (n < 2) return 0;
  const mt = samples.reduce((s, m) => s + m.t, 0) / n;
  const mr = samples.reduce((s, m) => s + m.rss, 0) / n;
  const num = samples.reduce((s, m) => s + (m.t - mt) * (m.rss - mr), 0);
  const den = samples.reduce((s, m) => s + (m.t - mt) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

/** Waits until no replica has an event queued for a peer and every peer is ok. */
async function quiesce(load, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let detail = "";
  for (;;) {
    const views = [];
    for (const t of [...TRACKERS, churnTracker]) {
      for (const r of REPLICAS) {
        const q = `?model_name=${encodeURIComponent(t.model.model)}&tenant_id=${t.model.tenant}`;
        const answer = await load.call("replica_sync", r, "GET", `/replica_sync/peers${q}`);
        const peers = answer.status === 200 ? JSON.parse(answer.value).peers : [];
        views.push(...peers.map((p) => ({ at: `${t.model.model}/${t.model.tenant}@${r}→${p.peer}`, ...p })));
      }
    }
    const behind = views.filter((p) => p.state !== "ok" || p.queued_events !== 0);
    detail =
      behind.length === 0
        ? `${views.length} peer links`
        : `${behind.length} behind: ${behind
            .slice(0, 3)
            .map((p) => `${p.at} ${p.state} ${p.queued_events}`)
            .join(", ")}`;
    if (behind.length === 0 && views.length > 0) return { ok: true, detail };
    if (Date.now() > deadline) return { ok: false, detail };
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Each replica's listings against the model, and the replicas against each other. */
async function compare(load, model) {
  const q = `?model_name=${encodeURIComponent(model.model)}&tenant_id=${model.tenant}`;
  const name = `${model.model}/${model.tenant}`;
  const expected = { workers: show(model.workerRows()), loads: show(model.loadRows()) };
  const probe = [...(model.requests.values().next().value?.hashes ?? [1n, 2n]), 42n];
  const potentials = [];
  for (const r of REPLICAS) {
    for (const kind of ["workers", "loads"]) {
      const answer = await load.call(kind, r, "GET", `/${kind}${q}`, undefined, { binary: true });
      const got = answer.status === 200 ? show(exact(answer.value)) : `${answer.status}`;
      check(
        `${name} @${r}: /${kind} equals the model`,
        got === expected[kind],
        got === expected[kind]
          ? `${exact(answer.value).length} rows`
          : `got ${got.slice(0, 300)} expected ${expected[kind].slice(0, 300)}`,
      );
    }
    const body = {
      model_name: model.model,
      tenant_id: model.tenant,
      sequence_hashes: probe,
      new_isl_tokens: 7,
    };
    const answer = await load.call("potential_loads", r, "POST", "/potential_loads", body, { binary: true });
    potentials.push(
      answer.status === 200 ? show(exact(answer.value)) : `${answer.status} ${decodeSafe(answer.value)}`,
    );
  }
  if (model.workers.size > 0) {
    check(
      `${name}: replicas agree on /potential_loads`,
      potentials.every((p) => p === potentials[0]),
      potentials[0].slice(0, 120),
    );
  }
}

function decodeSafe(value) {
  try {
    return value instanceof Uint8Array ? show(decode(value)) : String(value);
  } catch {
    return String(value);
  }
}

main().catch((error) => {
  console.error(error);
  console.log(
    `${checks.filter((c) => c.ok).length} passed, ${checks.filter((c) => !c.ok).length + 1} failed`,
  );
  process.exitCode = 1;
});
