/**
 * The benchmark's table and its targets (issue 5). Every ratio comes from figures of the same run.
 * A target whose part did not run is reported as not measured, never as met.
 */

const fmt = (x, digits = 0) =>
  x === null || x === undefined || Number.isNaN(x)
    ? "—"
    : x.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

function table(title, header, rows) {
  const cells = [header, ...rows].map((row) => row.map(String));
  const widths = header.map((_, c) => Math.max(...cells.map((row) => row[c].length)));
  const line = (row) =>
    row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("  ");
  return [
    title,
    line(cells[0]),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...cells.slice(1).map(line),
  ].join("\n");
}

const at = (core, live) => core.sizes.find((s) => s.live === live);
const scenario = (http, prefix) => http.scenarios.find((s) => s.scenario.startsWith(prefix));

/** A Worker's `/add`+`/free` requests/s over its `/health` requests/s, in one format. */
const addFreeRatio = (worker, format) =>
  scenario(worker, `POST /add + /free (${format})`).requestsPerSec /
  scenario(worker, "GET /health").requestsPerSec;

/**
 * Each target: what it compares, the measured value (null: not measured), whether it is met, and
 * for the core's cycles and the HTTP targets the same figure for their floor in the same run (null:
 * none).
 */
export function targetsOf({ core, coreFloor, http, rows, replication }) {
  const cycleRatios = core.sizes.map((s) => s.ours.cyclesPerSec / s.baseline.cyclesPerSec);
  const floorRatios = coreFloor?.sizes.map((s) => s.floor.cyclesPerSec / s.baseline.cyclesPerSec);
  const addFree = (format) => addFreeRatio(http, format);
  const floorOf = (figure) => (http.floor ? figure(http.floor) : null);
  // "Half shared" holds once each family has several live members; at N = 1,000 (1,000 families)
  // most prompts share nothing, so the heap target is judged where the workload has its shape.
  const heap = Math.max(
    at(core, 10_000).ours.heapBytesPerRequest,
    at(core, 100_000).ours.heapBytesPerRequest,
  );
  const list = [
    [
      "core add+free cycles/s, ours ÷ baseline (lowest over N)",
      "≥ 8×",
      Math.min(...cycleRatios),
      (v) => v >= 8,
      1,
      floorRatios ? Math.min(...floorRatios) : null,
    ],
    [
      "core potential_loads p50 at 10,000 live, baseline ÷ ours",
      "≥ 100×",
      at(core, 10_000).baseline.p50Us / at(core, 10_000).ours.p50Us,
      (v) => v >= 100,
      0,
    ],
    [
      "core potential_loads p50, ours at 100,000 ÷ at 1,000 live",
      "≤ 1.5",
      at(core, 100_000).ours.p50Us / at(core, 1_000).ours.p50Us,
      (v) => v <= 1.5,
      2,
    ],
    ["heap bytes per live request (worst of N = 10,000 and 100,000)", "≤ 1,500", heap, (v) => v <= 1500, 0],
    [
      "HTTP /add+/free req/s ÷ /health req/s (JSON)",
      "≥ 0.9",
      addFree("json"),
      (v) => v >= 0.9,
      2,
      floorOf((f) => addFreeRatio(f, "json")),
    ],
    [
      "HTTP /add+/free req/s ÷ /health req/s (MessagePack)",
      "≥ 0.9",
      addFree("msgpack"),
      (v) => v >= 0.9,
      2,
      floorOf((f) => addFreeRatio(f, "msgpack")),
    ],
    [
      "HTTP /batch (256 ops, MessagePack) lifecycle ops/s",
      "≥ 100,000",
      http.batchOpsPerSec,
      (v) => v >= 100_000,
      0,
      floorOf((f) => f.batchOpsPerSec),
    ],
    ["SQLite rows written per /add", "≤ 2", rows.rowsPerAdd, (v) => v <= 2, 2],
    [
      "replication events/s applied at the peer (/batch load at the origin)",
      "≥ 50,000",
      replication?.eventsPerSec ?? null,
      (v) => v >= 50_000,
      0,
    ],
    [
      "replication p99 delay acceptance → application, ms (bucket upper bound)",
      replication ? `≤ ${replication.flushMs + 50} (REPLICA_FLUSH_MS + 50)` : "≤ REPLICA_FLUSH_MS + 50",
      replication?.p99DelayMsUpperBound ?? null,
      (v) => v <= replication.flushMs + 50,
      0,
    ],
  ];
  return list.map(([figure, target, value, ok, digits, floor = null]) => ({
    figure,
    target,
    value,
    digits,
    floor,
    status: value === null ? "NOT MEASURED" : ok(value) ? "MET" : "NOT MET",
  }));
}

/** The replication part's figures; the peer cannot apply faster than the origin accepts in steady state. */
function replicationSection(r) {
  if (!r) return ["REPLICATION — not measured", ""];
  return [
    table(
      `REPLICATION — two replicas (east, west) in one local runtime, REPLICA_FLUSH_MS ${r.flushMs}; autocannon, ${r.connections} connections of /batch (${r.opsPerCall} ops, MessagePack) at east; a ${fmt(r.windowSeconds, 1)} s window inside the load`,
      ["figure", "value"],
      [
        ["events/s applied at west", fmt(r.eventsPerSec)],
        [
          "events/s accepted at east (same window; the most west can apply in steady state)",
          fmt(r.originEventsPerSec),
        ],
        ["/batch ops/s answered at east (same window)", fmt(r.originOpsPerSec)],
        ["/batch latency at east p50 / p99, ms", `${fmt(r.originBatchP50Ms)} / ${fmt(r.originBatchP99Ms)}`],
        [
          "delay acceptance → application p50 / p99 (bucket upper bounds) / mean, ms",
          `≤ ${fmt(r.p50DelayMsUpperBound)} / ≤ ${fmt(r.p99DelayMsUpperBound)} / ${fmt(r.meanDelayMs)}`,
        ],
        [
          `paced: ${fmt(r.pacedEventsPerSec)} events/s in evenly spaced calls, delay p50 / p99 / mean, ms`,
          `≤ ${fmt(r.pacedP50DelayMsUpperBound)} / ≤ ${fmt(r.pacedP99DelayMsUpperBound)} / ${fmt(r.pacedMeanDelayMs)}`,
        ],
        [
          "west's lag at window start / end, events",
          `${fmt(r.lagEventsAtWindowStart)} / ${fmt(r.lagEventsAtWindowEnd)}`,
        ],
        [
          "catch-up after the load: s, events/s (east idle)",
          `${fmt(r.catchUpSeconds, 1)}, ${fmt(r.catchUpEventsPerSec)}`,
        ],
        [
          "longest reading of west / east, ms (each counter's time is its reading's middle)",
          `${fmt(r.peerReadingMs)} / ${fmt(r.originReadingMs)}`,
        ],
        ["events accepted at east, all applied once at west", fmt(r.eventsAccepted)],
        ["load average at the part's end (1 / 5 / 15 min)", r.loadAverage.join(" / ")],
      ],
    ),
    "",
  ];
}

/** The core's floor (an index that only reads one table line per added value) against the baseline. */
function coreFloorSection(core, coreFloor) {
  if (!coreFloor) return ["CORE FLOOR — not measured", ""];
  return [
    table(
      "CORE FLOOR — bench/core/index-floor.ts: our Tracker whose value index only reads one line of a table of the real size per added value, and the baseline, same trace",
      ["live N", "cycles/s floor", "baseline", "×", "table MB", "ours ÷ floor"],
      coreFloor.sizes.map((s) => [
        fmt(s.live),
        fmt(s.floor.cyclesPerSec),
        fmt(s.baseline.cyclesPerSec),
        fmt(s.floor.cyclesPerSec / s.baseline.cyclesPerSec, 1),
        fmt(s.floor.tableBytes / 1e6, 2),
        fmt(
          at(core, s.live).ours.cyclesPerSec /
            at(core, s.live).baseline.cyclesPerSec /
            (s.floor.cyclesPerSec / s.baseline.cyclesPerSec),
          2,
        ),
      ]),
    ),
    "",
  ];
}

/** The platform floor's figures under the same loads, and the service's share of each. */
function floorSection(http) {
  if (!http.floor) return ["PLATFORM FLOOR — not measured", ""];
  const health = http.floor.scenarios[0].requestsPerSec;
  return [
    table(
      "PLATFORM FLOOR — bench/floor: the same loads against a Worker that only carries each body to a Durable Object and writes it as one row",
      ["scenario", "req/s", "p50 ms", "p99 ms", "÷ /health", "service ÷ floor"],
      http.floor.scenarios.map((s) => [
        s.scenario,
        fmt(s.requestsPerSec),
        fmt(s.p50Ms, 1),
        fmt(s.p99Ms, 1),
        fmt(s.requestsPerSec / health, 2),
        fmt(scenario(http, s.scenario).requestsPerSec / s.requestsPerSec, 2),
      ]),
    ),
    `/batch lifecycle ops/s: ${fmt(http.floor.batchOpsPerSec)}`,
    "",
  ];
}

export function printReport({ environment, core, coreFloor, http, rows, replication }, targets) {
  const out = [];
  out.push(
    `edge-slot-tracker benchmark — ${environment.date}, Node ${environment.node}, ${environment.cpus} × ${environment.cpuModel}, load average at start ${environment.loadAverageAtStart.join(" / ")}`,
    "",
    table(
      "CORE — one trace through our Tracker and the baseline (64 ranks; 64-block prompts, 1,000 families sharing 32 blocks)",
      [
        "live N",
        "cycles/s ours",
        "baseline",
        "×",
        "pl p50 µs ours",
        "p99",
        "baseline p50",
        "p99",
        "×",
        "heap B/req ours",
        "baseline",
      ],
      core.sizes.map((s) => [
        fmt(s.live),
        fmt(s.ours.cyclesPerSec),
        fmt(s.baseline.cyclesPerSec),
        fmt(s.ours.cyclesPerSec / s.baseline.cyclesPerSec, 1),
        fmt(s.ours.p50Us, 1),
        fmt(s.ours.p99Us, 1),
        fmt(s.baseline.p50Us, 0),
        fmt(s.baseline.p99Us, 0),
        fmt(s.baseline.p50Us / s.ours.p50Us, 0),
        fmt(s.ours.heapBytesPerRequest),
        fmt(s.baseline.heapBytesPerRequest),
      ]),
    ),
    "",
    ...coreFloorSection(core, coreFloor),
    table(
      `HTTP — wrangler unstable_startWorker on 127.0.0.1, autocannon, ${http.connections} connections, 8 s after 2 s warm-up`,
      ["scenario", "req/s", "p50 ms", "p99 ms", "÷ /health"],
      http.scenarios.map((s) => [
        s.scenario,
        fmt(s.requestsPerSec),
        fmt(s.p50Ms, 1),
        fmt(s.p99Ms, 1),
        fmt(s.requestsPerSec / http.scenarios[0].requestsPerSec, 2),
      ]),
    ),
    `/batch lifecycle ops/s: ${fmt(http.batchOpsPerSec)}`,
    "",
    ...floorSection(http),
    `SQLite rows written per /add: ${fmt(rows.rowsPerAdd, 2)} (per /free: ${fmt(rows.rowsPerFree, 2)}; ${rows.adds} of each, one replica)`,
    `SQLite rows written per /batch op: ${fmt(rows.rowsPerBatchOp, 3)} (${rows.batchCalls} calls of 256 ops, requests living ${rows.batchLifetimeCalls} calls)`,
    "",
    ...replicationSection(replication),
    table(
      "TARGETS",
      ["figure", "target", "measured", "platform floor", ""],
      targets.map((t) => [
        t.figure,
        t.target,
        fmt(t.value, t.digits),
        t.floor === null ? "" : fmt(t.floor, t.digits),
        t.status,
      ]),
    ),
  );
  const missed = targets.filter((t) => t.status !== "MET");
  out.push(
    "",
    missed.length === 0
      ? "ALL TARGETS MET"
      : `${missed.length} OF ${targets.length} TARGETS NOT MET: ${missed.map((t) => `${t.figure} (${t.status})`).join("; ")}`,
  );
  process.stdout.write(`${out.join("\n")}\n`);
}
