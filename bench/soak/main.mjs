/**
 * `npm run soak`: the Worker in the local runtime (wrangler's bundle in Miniflare, `runtime.mjs`) with
 * three replicas (east, west, apac) and a fresh state directory,
 * SOAK_REQUESTS (default 100,000) mixed requests from SOAK_CONCURRENCY client loops (default 16),
 * paced at SOAK_RATE operations/s (default 60, which a loaded 2-core machine sustains), then,
 * once replication is quiet, checks that every replica's /workers and /loads equal an independent
 * model of the acknowledged operations and each other, that no answer was a 5xx, and that the Worker
 * isolate's JS heap stayed flat. Prints `N passed, M failed` last and exits non-zero on a failure.
 *
 * Flat heap: the isolate's used heap after a full collection (see `heap.mjs`), read once the workers
 * are registered and before the first load request (start), then every SOAK_HEAP_EVERY requests
 * (default 5,000), and once more after replication has settled (end). The live requests grow to
 * at most SOAK_LIVE_TARGET per tracker, and each is ended once it is a quarter of the expiry age old
 * (SOAK_EXPIRY_SECONDS, default 120), so the tracker expires none of them and the model stays exact.
 * What replication keeps per request id for merging (`core/replica/replica-records.ts` frees and
 * marks: one expiry age past each change; `core/replica/departure-log.ts` timelines: two) fills for
 * two expiry ages and is bounded from then on: the first reading after that is the steady state.
 * The check holds when end ≤ steady × 1.1 + 1 MB and the least-squares slope from steady on is at
 * most SOAK_HEAP_SLOPE_KB (default 100) KB per 10,000 requests (see `heapCheck`). Workerd's RSS is
 * printed beside each reading as context only: locally it grows by several KB per request whatever
 * the Worker does, and it is not what the 128 MB production limit counts. SOAK_MAX_SECONDS (default
 * 1,800) stops the load early on a machine too slow to send all the requests in time, and
 * SOAK_HEAP_SNAPSHOTS=dir writes heap snapshots at steady state and at the end.
 *
 * Three frontends hold leases on the first tracker (SOAK_LEASE_TTL_MS, default 15,000, renewed every
 * ttl/3) and half of that tracker's bookings are made under one of them; halfway through the load one
 * frontend dies (`frontends.mjs`). After the load, its lease must be gone at every replica within
 * 30 s of its deadline, and its bookings with it: the model drops them, and the replicas must match.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { compare, quiesce } from "./checks.mjs";
import { findWorkerd, rssOf, startDev } from "./dev-server.mjs";
import { Heap } from "./heap.mjs";
import { heapCheck, mb } from "./heap-check.mjs";
import { Frontends } from "./frontends.mjs";
import { Load } from "./load.mjs";
import { show, TrackerModel } from "./model.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const REQUESTS = Number(process.env.SOAK_REQUESTS ?? 100_000);
const MAX_SECONDS = Number(process.env.SOAK_MAX_SECONDS ?? 1_800);
const EXPIRY_SECONDS = Number(process.env.SOAK_EXPIRY_SECONDS ?? 120);
/** Offered load, client operations/s (0: as fast as answered); see `Load.run`. */
const RATE = Number(process.env.SOAK_RATE ?? 60);
/** Merge records fill for two expiry ages (see the header): readings from then on are steady. */
const STEADY_AFTER_SECONDS = 2 * EXPIRY_SECONDS;
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 16);
const LIVE_TARGET = Number(process.env.SOAK_LIVE_TARGET ?? 800);
const HEAP_EVERY = Number(process.env.SOAK_HEAP_EVERY ?? 5_000);
const HEAP_SLOPE_KB = Number(process.env.SOAK_HEAP_SLOPE_KB ?? 100);
/** A folder for heap snapshots at steady state and at the end, to diff what grew (DevTools' Memory tab). */
const SNAPSHOTS = process.env.SOAK_HEAP_SNAPSHOTS;
if (SNAPSHOTS) mkdirSync(SNAPSHOTS, { recursive: true });
const REPLICAS = ["east", "west", "apac"];
const LEASE_TTL_MS = Number(process.env.SOAK_LEASE_TTL_MS ?? 15_000);
/** The frontend that dies halfway through the load. */
const DOOMED = "frontend-west-1";

/** The load's seed: fixed, so a failing soak replays; SOAK_SEED explores others. */
const SEED = Number(process.env.SOAK_SEED ?? 20_261_201);
let seed = SEED;
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

async function main() {
  console.log(
    `soak: ${REQUESTS} requests at ${RATE || "unpaced"}/s (at most ${MAX_SECONDS} s), ${CONCURRENCY} clients, seed ${SEED}`,
  );
  const dev = await startDev(root, {
    REPLICAS: REPLICAS.join(","),
    REQUEST_EXPIRY_SECONDS: String(EXPIRY_SECONDS),
  });
  console.log(`runtime on ${dev.url}, state in ${dev.persist}`);
  // The runtime runs in a process group of its own (so stop() ends workerd too): an interrupted
  // soak must end it as well, or it keeps serving after the soak is gone.
  for (const signal of ["SIGINT", "SIGTERM"]) {
    process.once(signal, () => void dev.stop().finally(() => process.exit(130)));
  }
  try {
    await run(dev);
  } finally {
    await dev.stop();
  }
  const failed = checks.filter((c) => !c.ok).length;
  // The state is kept for a look when something failed.
  if (failed === 0) rmSync(dev.persist, { recursive: true, force: true });
  else console.log(`state and runtime log kept in ${dev.persist}`);
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
    maxAgeMs: (EXPIRY_SECONDS * 1000) / 4,
    random,
  });
  load.frontends = new Frontends({
    load,
    tracker: TRACKERS[0],
    frontends: [
      { owner: "frontend-east-1", home: "east" },
      { owner: DOOMED, home: "west" },
      { owner: "frontend-apac-1", home: "apac" },
    ],
    ttlMs: LEASE_TTL_MS,
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
  await load.frontends.start();
  await quiesce(load, [...TRACKERS.map((t) => t.model), churnTracker.model], REPLICAS, 60_000);
  const heap = await Heap.connect(dev.inspectorPort);
  try {
    await measure(dev, load, heap);
  } finally {
    heap.close();
    load.frontends.stop();
  }
}

async function measure(dev, load, heap) {
  let pid = findWorkerd(dev.pid);
  const rss = () => {
    pid = pid !== undefined && rssOf(pid) !== undefined ? pid : findWorkerd(dev.pid);
    return pid === undefined ? Number.NaN : (rssOf(pid) ?? Number.NaN);
  };
  // Straight to the Worker, not through `load`, so the readings add nothing to the counts.
  const poke = () =>
    fetch(`${dev.url}/health`)
      .then((r) => r.arrayBuffer())
      .catch(() => {});
  const live = () => TRACKERS.reduce((n, tr) => n + tr.model.requests.size, 0);
  const started = Date.now();
  /** @type {{ ops: number, t: number, heap: number, rss: number, live: number }[]} */
  const readings = [];
  let sent = -1;
  let snapshotted = false;
  const read = async (ops) => {
    const reading = {
      ops,
      t: (Date.now() - started) / 1000,
      heap: await heap.live(poke),
      rss: rss(),
      live: live(),
    };
    readings.push(reading);
    const steady = reading.t >= STEADY_AFTER_SECONDS;
    if (SNAPSHOTS && ((steady && !snapshotted) || ops === sent)) {
      snapshotted = true;
      await heap.snapshot(join(SNAPSHOTS, `${ops}.heapsnapshot`), poke);
    }
    const { serverErrors, transportErrors, unexpected } = load.stats;
    console.log(
      `ops=${ops} t=${reading.t.toFixed(0)}s (${(ops / Math.max(reading.t, 1)).toFixed(0)}/s) live=${reading.live} 5xx=${serverErrors} errors=${transportErrors} unexpected=${unexpected} heap=${mb(reading.heap)} MB rss=${mb(reading.rss)} MB`,
    );
    return reading;
  };

  load.resetStats();
  const start = await read(0);
  let loading = true;
  const sampler = (async () => {
    for (let next = HEAP_EVERY; loading; ) {
      if (load.stats.ops >= REQUESTS / 2 && !load.frontends.dead(DOOMED)) {
        load.frontends.kill(DOOMED, REPLICAS, 30_000);
        console.log(`ops=${load.stats.ops}: ${DOOMED} stops renewing its lease`);
      }
      if (load.stats.ops >= next) {
        await read(load.stats.ops);
        next += HEAP_EVERY;
      } else await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  const deadline = started + MAX_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, () =>
      load.run(() => load.stats.ops >= REQUESTS || Date.now() >= deadline, RATE),
    ),
  );
  loading = false;
  await sampler;
  const elapsed = (Date.now() - started) / 1000;
  sent = load.stats.ops;
  if (sent < REQUESTS) console.log(`load stopped at ${MAX_SECONDS} s, after ${sent} of ${REQUESTS} requests`);

  const models = [...TRACKERS.map((t) => t.model), churnTracker.model];
  const owned = [...TRACKERS[0].model.requests.values()].filter((r) => r.owner === DOOMED).length;
  const lapses = await load.frontends.settle();
  for (const lapse of lapses) {
    check(
      `${lapse.owner} died: its lease is gone at every replica within 30 s of its deadline`,
      lapse.gone && owned > 0,
      `${owned} of its bookings live when the load ended; no replica listed it ${lapse.afterDeadlineMs} ms after the deadline`,
    );
  }
  const quiet = await quiesce(load, models, REPLICAS, 120_000);
  const end = await read(sent);
  const { stats } = load;
  console.log(
    `load: ${sent} operations in ${elapsed.toFixed(0)} s (${(sent / elapsed).toFixed(0)}/s); by kind ${JSON.stringify(stats.byKind)}; statuses ${JSON.stringify(stats.statuses)}`,
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

  if (RATE > 0) {
    // The heap check's premise: replication keeps per request id what scales with the request rate,
    // so readings compare only at one offered rate. A machine too busy to hold it voids the check.
    const rates = readings
      .slice(1, -1)
      .map((r, i) => (r.ops - readings[i].ops) / Math.max(r.t - readings[i].t, 1e-3));
    const held = rates.every((rate) => Math.abs(rate - RATE) <= RATE * 0.1);
    check(
      `paced rate held (every reading window within 10% of ${RATE}/s, so heap readings compare)`,
      held,
      `windows ${Math.min(...rates).toFixed(0)}–${Math.max(...rates).toFixed(0)}/s`,
    );
  }
  const memory = heapCheck(readings.slice(0, -1), start, end, {
    steadyAfterSeconds: STEADY_AFTER_SECONDS,
    slopeKB: HEAP_SLOPE_KB,
  });
  check(
    `isolate heap flat (end ≤ steady × 1.1 + 1 MB, slope from steady ≤ ${HEAP_SLOPE_KB} KB per 10,000 requests)`,
    memory.ok,
    memory.detail,
  );
  check(
    "the runtime still serving",
    dev.alive() && (await load.call("health", "east", "GET", "/health")).status === 200,
  );

  mkdirSync(join(root, "test-artifacts"), { recursive: true });
  writeFileSync(
    join(root, "test-artifacts/soak.json"),
    `${JSON.stringify({ requests: sent, seconds: elapsed, concurrency: CONCURRENCY, stats, heap: memory.figures, readings, live: TRACKERS.map((t) => t.model.requests.size), checks }, null, 2)}\n`,
  );
}

main().catch((error) => {
  console.error(error);
  console.log(
    `${checks.filter((c) => c.ok).length} passed, ${checks.filter((c) => !c.ok).length + 1} failed`,
  );
  process.exitCode = 1;
});
