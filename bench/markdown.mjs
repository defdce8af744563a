#!/usr/bin/env node
/**
 * `npm run bench:docs`: writes the latest run's tables into `docs/benchmarks.md` (between
 * `<!-- latest-run:start -->` and `<!-- latest-run:end -->`) and its targets into `README.md`
 * (between `<!-- targets:start -->` and `<!-- targets:end -->`), from `bench/results.json` alone, so
 * that the published figures are the run's and nothing else. Every cell comes from the results; a
 * figure the run does not have prints `—`, and each target's status is the one the report gave it.
 * The text outside the markers is left as it is.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { at, coreOverFloor, fmt } from "./report.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const results = JSON.parse(readFileSync(join(root, "bench/results.json"), "utf8"));

/** A cell's text, with what would end the cell or open HTML escaped. */
const cell = (x) => String(x ?? "—").replace(/[\\|<]/g, (c) => `\\${c}`);

/** A table as biome formats it: every column padded to its widest cell, at least 3 wide. */
function table(header, rows) {
  const cells = [header, ...rows].map((row) => row.map(cell));
  const width = (text) => [...text].length;
  const widths = header.map((_, c) => Math.max(3, ...cells.map((row) => width(row[c]))));
  const line = (row) => `| ${row.map((text, c) => text + " ".repeat(widths[c] - width(text))).join(" | ")} |`;
  return [line(cells[0]), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...cells.slice(1).map(line)];
}

/** `x ÷ y` to `digits` decimals, `—` when either figure is absent. */
const ratio = (x, y, digits) => fmt(x / y, digits);
const upTo = (x) => (x === null || x === undefined ? "—" : `≤ ${fmt(x)}`);
const liveSizes = (...books) => [...new Set(books.flatMap((b) => b?.sizes.map((s) => s.live) ?? []))];

function runTable({ environment: e, seconds }) {
  return table(
    ["run", "value"],
    [
      ["date", e?.date],
      ["Node", e?.node],
      ["CPUs", fmt(e?.cpus)],
      ["CPU model", e?.cpuModel],
      ["load average at start (1 / 5 / 15 min)", e?.loadAverageAtStart?.map((x) => fmt(x, 2)).join(" / ")],
      ["seconds", fmt(seconds)],
    ],
  );
}

function coreTable({ core }) {
  return table(
    [
      "live N",
      "cycles/s, ours",
      "baseline",
      "×",
      "`potential_loads` p50 µs, ours",
      "p99",
      "baseline p50 µs",
      "×",
      "heap B/request, ours",
      "index aside",
      "baseline",
    ],
    liveSizes(core).map((live) => {
      const { ours, baseline } = at(core, live);
      return [
        fmt(live),
        fmt(ours?.cyclesPerSec),
        fmt(baseline?.cyclesPerSec),
        ratio(ours?.cyclesPerSec, baseline?.cyclesPerSec, 1),
        fmt(ours?.p50Us, 1),
        fmt(ours?.p99Us, 1),
        fmt(baseline?.p50Us),
        ratio(baseline?.p50Us, ours?.p50Us, 0),
        fmt(ours?.heapBytesPerRequest),
        fmt(ours?.liveStateBytesPerRequest),
        fmt(baseline?.heapBytesPerRequest),
      ];
    }),
  );
}

/** One row per size of the core's or the floor's, so that a size the floor did not reach shows as `—`. */
function coreFloorTable({ core, coreFloor }) {
  return table(
    ["core floor, live N", "cycles/s", "baseline", "×", "table MB", "ours ÷ floor"],
    liveSizes(core, coreFloor).map((live) => {
      const f = coreFloor?.sizes.find((s) => s.live === live);
      return [
        fmt(live),
        fmt(f?.floor.cyclesPerSec),
        fmt(f?.baseline.cyclesPerSec),
        ratio(f?.floor.cyclesPerSec, f?.baseline.cyclesPerSec, 1),
        fmt(f && f.floor.tableBytes / 1e6, 2),
        fmt(core && coreOverFloor(core, coreFloor, live), 2),
      ];
    }),
  );
}

function httpTable({ http }) {
  const floorOf = (name) => http?.floor?.scenarios.find((s) => s.scenario === name);
  return table(
    ["HTTP scenario", "req/s", "p50 ms", "p99 ms", "floor req/s", "service ÷ floor"],
    [
      ...(http?.scenarios ?? []).map((s) => [
        s.scenario,
        fmt(s.requestsPerSec),
        fmt(s.p50Ms, 1),
        fmt(s.p99Ms, 1),
        fmt(floorOf(s.scenario)?.requestsPerSec),
        ratio(s.requestsPerSec, floorOf(s.scenario)?.requestsPerSec, 2),
      ]),
      [
        "`/batch` lifecycle ops/s",
        fmt(http?.batchOpsPerSec),
        "—",
        "—",
        fmt(http?.floor?.batchOpsPerSec),
        ratio(http?.batchOpsPerSec, http?.floor?.batchOpsPerSec, 2),
      ],
    ],
  );
}

function rowsTable({ rows }) {
  return table(
    ["SQLite rows written", "value"],
    [
      ["per `/add`", fmt(rows?.rowsPerAdd, 2)],
      ["per `/free`", fmt(rows?.rowsPerFree, 2)],
      ["per `/batch` op", fmt(rows?.rowsPerBatchOp, 3)],
    ],
  );
}

function replicationTable({ replication: r }) {
  const delays = (p50, p99, mean) =>
    p50 === undefined && p99 === undefined && mean === undefined
      ? "—"
      : `${upTo(p50)} / ${upTo(p99)}, ${fmt(mean)} ms`;
  return table(
    ["replication (east → west, one local runtime)", "value"],
    [
      ["events/s accepted at east, `/batch` as fast as it answers", fmt(r?.originEventsPerSec)],
      ["events/s applied at west, same window", fmt(r?.eventsPerSec)],
      [
        "delay p50 / p99 (bucket upper bounds), mean, under that load",
        delays(r?.p50DelayMsUpperBound, r?.p99DelayMsUpperBound, r?.meanDelayMs),
      ],
      [
        "west's lag at window start → end, events",
        r ? `${fmt(r.lagEventsAtWindowStart)} → ${fmt(r.lagEventsAtWindowEnd)}` : "—",
      ],
      ["catch-up with east idle, events/s", fmt(r?.catchUpEventsPerSec)],
      ["catch-up ÷ accepted", ratio(r?.catchUpEventsPerSec, r?.originEventsPerSec, 2)],
      ["paced load, events/s", fmt(r?.pacedEventsPerSec)],
      [
        "paced delay p50 / p99 (bucket upper bounds), mean",
        delays(r?.pacedP50DelayMsUpperBound, r?.pacedP99DelayMsUpperBound, r?.pacedMeanDelayMs),
      ],
      ["events accepted at east, each applied once at west", fmt(r?.eventsAccepted)],
    ],
  );
}

/** The hashing part's subjects, the floors among them, each as the run measured it. */
function hashingTable({ hashing: h }) {
  return table(
    [`hashing a ${h ? fmt(h.tokens) : "—"}-token prompt`, "median µs", "MB/s"],
    (h?.rows ?? []).map((r) => [r.name, fmt(r.medianUs, 1), fmt(r.mbPerS)]),
  );
}

/** The cache-index part: recording beside the tracker's cycle of the same run, queries, memory. */
function cacheIndexTable({ cacheIndex: c }) {
  const bytes = (rows) => rows?.map((r) => `${fmt(r.measured)} B at ${fmt(r.entries)}`).join(", ");
  return table(
    ["cache index (128-block bookings, 64 ranks)", "value"],
    [
      ...(c?.timed ?? []).map((t) => [`${t.name}, CPU µs`, fmt(t.medianUs, 1)]),
      ["record new (distinct) ÷ cycle without the index", ratio(c?.recordNewUs, c?.cycleWithoutIndexUs, 2)],
      ["record renewal ÷ cycle without the index", ratio(c?.recordRenewalUs, c?.cycleWithoutIndexUs, 2)],
      ...(c?.query ?? []).map((q) => [`query p50 at ${fmt(q.bookings)} bookings, µs`, fmt(q.medianUs, 2)]),
      ["query p50 ratio, 50,000 ÷ 1,000 bookings", fmt(c?.queryRatio, 2)],
      ["bytes per entry, distinct prompts", bytes(c?.memory.distinct)],
      ["bytes per entry, shared prefixes", bytes(c?.memory.sharedPrefix)],
    ],
  );
}

/** select_and_reserve + DELETE pairs over HTTP, beside the platform floor of the same run. */
function selectionHttpTable({ selectionHttp: h }) {
  const floorOf = (i) => h?.floor.scenarios[i];
  return table(
    ["HTTP scenario (selection)", "req/s", "p50 ms", "p99 ms", "floor req/s", "service ÷ floor"],
    [
      ...(h?.scenarios ?? []).map((s, i) => [
        s.scenario,
        fmt(s.requestsPerSec),
        fmt(s.p50Ms, 1),
        fmt(s.p99Ms, 1),
        fmt(floorOf(i)?.requestsPerSec),
        ratio(s.requestsPerSec, floorOf(i)?.requestsPerSec, 2),
      ]),
      [
        "select_and_reserve + DELETE pairs/s, the median session",
        fmt(h?.pairsPerSec, 1),
        "—",
        "—",
        fmt(h?.floor.pairsPerSec, 1),
        fmt(h?.ratio, 2),
      ],
      ...(h?.sessions ?? []).map((s, i) => [
        `session ${i + 1}, pairs/s (fresh runtimes, four ${h.runSeconds} s runs a side)`,
        fmt(s.pairsPerSec, 1),
        "—",
        "—",
        fmt(s.floorPairsPerSec, 1),
        fmt(s.ratio, 2),
      ]),
    ],
  );
}

/** The object's own time per select_and_reserve, per cache-index cap and book size. */
function selectionCoreTable({ selectionCore: c }) {
  const ratioOf = (cap) => c?.ratios.find((r) => r.cap === cap);
  return table(
    [
      "cache-index cap",
      "live bookings",
      "p50 µs",
      "p99 µs",
      "mean µs",
      "p50 ÷ at 1,000",
      "p99 ÷ at 1,000",
      "heap B per booked block",
      "index entries after the fill",
    ],
    (c?.runs ?? []).map((r) => {
      const small = c.runs.find((x) => x.cap === r.cap && x.live === c.runs[0].live);
      return [
        `${r.cap} (${fmt(r.maxCacheEntries)})`,
        fmt(r.live),
        fmt(r.p50Us, 1),
        fmt(r.p99Us, 1),
        fmt(r.meanUs, 1),
        r === small ? "—" : fmt(ratioOf(r.cap)?.p50Ratio, 2),
        r === small ? "—" : fmt(ratioOf(r.cap)?.p99Ratio, 2),
        fmt(r.heapBytesPerBookedBlock, 1),
        fmt(r.indexAfterFill.entries),
      ];
    }),
  );
}

/** Cache hits and load spread of each policy on the one trace. */
function routingQualityTable({ routingQuality: q }) {
  const pct = (x) => (x === undefined ? "—" : `${fmt(100 * x, 1)}%`);
  return table(
    [
      "policy (8 ranks)",
      "cache-hit blocks",
      "held on any rank",
      "live blocks/rank max ÷ mean",
      "worst sample",
      "CV",
      "mean live blocks/rank",
    ],
    (q?.policies ?? []).map((p) => [
      p.policy,
      pct(p.hitRate),
      pct(p.bestRankHitRate),
      fmt(p.meanMaxOverMean, 2),
      fmt(p.worstMaxOverMean, 2),
      fmt(p.meanCv, 3),
      fmt(p.meanLiveBlocksPerRank),
    ]),
  );
}

/** The targets as the report judged them: `status` is copied, never recomputed. */
const targets = results.targets ?? [];
const measured = (t) => fmt(t.value, t.digits);

function latestRun() {
  return [
    runTable(results),
    coreTable(results),
    coreFloorTable(results),
    httpTable(results),
    rowsTable(results),
    replicationTable(results),
    hashingTable(results),
    cacheIndexTable(results),
    table(
      ["target", "goal", "measured", "from (this run)", "met"],
      targets.map((t) => [t.figure, t.goal, measured(t), t.from || "—", t.status]),
    ),
  ]
    .map((lines) => lines.join("\n"))
    .join("\n\n");
}

function readmeTargets() {
  return table(
    ["target", "goal", "measured", "met"],
    targets.map((t) => [t.figure, t.goal, measured(t), t.status]),
  ).join("\n");
}

/** Replaces what lies between the two markers of `name` in `file`, which must hold each once. */
function rewrite(file, name, body) {
  const path = join(root, file);
  const text = readFileSync(path, "utf8");
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from || text.indexOf(start, from + 1) >= 0 || text.indexOf(end, to + 1) >= 0) {
    throw new Error(`${file}: expected one ${start} followed by one ${end}`);
  }
  writeFileSync(path, `${text.slice(0, from + start.length)}\n${body}\n${text.slice(to)}`);
}

rewrite("docs/benchmarks.md", "latest-run", `\n${latestRun()}\n`);
const cacheIndexFigure = results.cacheIndex?.memory.distinct.at(-1);
rewrite(
  "docs/benchmarks.md",
  "selection",
  [
    selectionHttpTable(results).join("\n"),
    selectionCoreTable(results).join("\n"),
    table(
      ["memory", "value"],
      [
        [
          "cache index, heap per (block, rank) entry at 50,000 live (difference of the two caps' trackers)",
          `${fmt(results.selectionCore?.indexBytesPerEntry, 1)} B`,
        ],
        [
          `cache index part, bytes per entry at ${fmt(cacheIndexFigure?.entries)} distinct entries (same run)`,
          `${fmt(cacheIndexFigure?.measured, 1)} B`,
        ],
      ],
    ).join("\n"),
  ].join("\n\n"),
);
rewrite("docs/benchmarks.md", "routing-quality", routingQualityTable(results).join("\n"));
rewrite("README.md", "targets", readmeTargets());
// The tables are written as biome formats them; formatting the two files keeps them so if a cell's
// width is counted differently (and `npm run format:check` then passes either way).
execFileSync(
  join(root, "node_modules/.bin/biome"),
  ["format", "--write", "README.md", "docs/benchmarks.md"],
  { cwd: root, stdio: "inherit" },
);
process.stderr.write("bench:docs: wrote the latest run into docs/benchmarks.md and README.md\n");
