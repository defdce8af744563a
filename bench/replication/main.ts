/**
 * The replication benchmark (issue 5, part 3): the Worker with two replicas, east and west, in one
 * local runtime, and a sustained `/batch` load at east (256 lifecycle ops a call, MessagePack, the
 * HTTP benchmark's), as fast as east answers. Over a window inside the load it reads east's stream
 * position (the events it accepted) and west's applied-events counter and apply-delay histogram,
 * over the public routes only. Then a paced load, at most half the rate west applied, gives the
 * delay of a stream that keeps up. After each load it waits for west to catch up and fails unless west
 * applied exactly the events east accepted, with no snapshot resync, and both report the same
 * `/loads`. argv[2] is the repo root. Prints one JSON line.
 */
import { loadavg } from "node:os";
import { AddBodies, headersOf, MODEL, registrations } from "../http/bodies";
import { CONNECTIONS, measure } from "../http/load";
import {
  BATCH_OPS,
  type BatchLifecycle,
  type BatchTally,
  batchLifecycle,
  failedCalls,
} from "../http/scenarios";
import { post, startLocalWorker } from "../http/worker";
import {
  type Applied,
  delaysBetween,
  ORIGIN,
  PEER,
  readApplied,
  readStream,
  resyncs,
  type Stream,
} from "./counters";

/** `REPLICA_FLUSH_MS`: the code's default, set here so that the figure reported is the one that ran. */
const FLUSH_MS = 10;
/**
 * `REPLICA_OUTBOX_CAP`, raised from its default (100,000) past anything one run accepts: a peer that
 * falls behind is then measured falling behind (lag, delay) instead of being resynced by snapshot
 * mid-window, which would mix snapshot pages into the stream's figures (a resync still fails the run).
 */
const OUTBOX_CAP = 10_000_000;
const WARMUP_S = 5;
const WINDOW_S = 30;
/** Load past the window's closing reading, so that it too is taken under load. */
const TAIL_S = 1;
/** The second, paced load: long enough for a few hundred batches at the rates seen here. */
const PACED_S = 10;
const CATCH_UP_TIMEOUT_MS = 120_000;
/** Trace prompts the adds cycle through. */
const PROMPTS = 1_000;

const root = process.argv[2];
if (!root) throw new Error("usage: replication.mjs <repo root>");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const at = (replica: string) => ({ "x-slot-tracker-replica": replica });

/** A value read over HTTP, with when: the middle of the request, whose length bounds the error. */
interface Timed<T> {
  value: T;
  atMs: number;
  tookMs: number;
}

async function timed<T>(read: () => Promise<T>): Promise<Timed<T>> {
  const started = performance.now();
  const value = await read();
  const ended = performance.now();
  return { value, atMs: (started + ended) / 2, tookMs: ended - started };
}

interface Reading {
  stream: Timed<Stream>;
  applied: Timed<Applied>;
  /** `/batch` calls answered at the origin so far, read by this process as they arrive. */
  answered: Timed<number>;
}

/** The origin's stream and the peer's counters, read at once; each carries its own time. */
async function reading(url: string, tally: BatchTally): Promise<Reading> {
  const answered = { value: tally.answered, atMs: performance.now(), tookMs: 0 };
  const [stream, applied] = await Promise.all([timed(() => readStream(url)), timed(() => readApplied(url))]);
  return { stream, applied, answered };
}

/** Per second between two timed readings of a counter. */
function rate<T>(first: Timed<T>, last: Timed<T>, count: (value: T) => number): number {
  return (count(last.value) - count(first.value)) / ((last.atMs - first.atMs) / 1000);
}

/**
 * Waits until the peer has acknowledged every event the origin accepted; `behind` is what it owed at
 * the first reading, which `seconds` (from then) took to ship and apply.
 */
async function caughtUp(url: string): Promise<{ stream: Stream; behind: number; seconds: number }> {
  let first: Timed<Stream> | undefined;
  for (;;) {
    const now = await timed(() => readStream(url));
    first ??= now;
    const stream = now.value;
    if (stream.queued === 0 && stream.state === "ok") {
      return { stream, behind: first.value.queued, seconds: (now.atMs - first.atMs) / 1000 };
    }
    if (performance.now() - first.atMs > CATCH_UP_TIMEOUT_MS) {
      throw new Error(`${PEER} still ${stream.queued} events behind (${stream.state}) after the load`);
    }
    await sleep(100);
  }
}

/** `/batch` calls at `perSec`, evenly spaced (whatever the answers' pace), for `PACED_S`. */
async function pacedLoad(url: string, lifecycle: BatchLifecycle, perSec: number): Promise<void> {
  const calls: Promise<void>[] = [];
  const started = performance.now();
  for (let k = 0; k < perSec * PACED_S; k++) {
    await sleep(started + (k * 1000) / perSec - performance.now());
    const context: Record<string, unknown> = {};
    const body = lifecycle.next(context);
    calls.push(
      fetch(`${url}batch`, { method: "POST", body, headers: lifecycle.headers }).then(async (res) =>
        lifecycle.answered(res.status, await res.text(), context),
      ),
    );
  }
  await Promise.all(calls);
}

/**
 * Waits for the peer to catch up, then fails unless it applied exactly the events the origin accepted
 * (its counter starts with its object, which must not have restarted), none of them by a snapshot
 * resync, and both answer the same `/loads`.
 */
async function converged(url: string) {
  const catchUp = await caughtUp(url);
  const final = await readApplied(url);
  const resynced = await resyncs(url);
  if (resynced > 0) throw new Error(`${ORIGIN} resynced ${PEER} by snapshot ${resynced} times`);
  if (final.applied !== catchUp.stream.accepted) {
    throw new Error(
      `${PEER} applied ${final.applied} of the ${catchUp.stream.accepted} events ${ORIGIN} accepted`,
    );
  }
  const [originLoads, peerLoads] = await Promise.all([loadsAt(url, ORIGIN), loadsAt(url, PEER)]);
  if (originLoads !== peerLoads)
    throw new Error(`/loads differ after catch-up:\n${originLoads}\n${peerLoads}`);
  return { ...catchUp, final };
}

/** The delays of the events applied between two readings, all of which must have been observed. */
function streamDelays(before: Applied, after: Applied) {
  const applied = after.applied - before.applied;
  const delays = delaysBetween(before, after);
  if (delays.events !== applied) {
    throw new Error(`${applied} events applied between two readings but ${delays.events} delays observed`);
  }
  return delays;
}

async function loadsAt(url: string, replica: string): Promise<string> {
  const res = await fetch(`${url}loads?model_name=${MODEL}`, { headers: at(replica) });
  if (!res.ok) throw new Error(`GET /loads at ${replica}: ${res.status}`);
  return res.text();
}

const worker = await startLocalWorker(root, {
  REPLICAS: `${ORIGIN},${PEER}`,
  REPLICA_FLUSH_MS: String(FLUSH_MS),
  REPLICA_OUTBOX_CAP: String(OUTBOX_CAP),
});
const { url } = worker;

try {
  for (const body of registrations()) await post(url, "/register", body, "application/json", at(ORIGIN));
  await caughtUp(url);
  const lifecycle = batchLifecycle(new AddBodies(PROMPTS), { ...headersOf("msgpack"), ...at(ORIGIN) });
  const { requests, tally } = lifecycle;
  const started = performance.now();
  const load = measure(`POST /batch at ${ORIGIN}`, WARMUP_S + WINDOW_S + TAIL_S, { url, requests });
  // Its failure is awaited below; until then it must not surface as an unhandled rejection.
  load.catch(() => {});
  await sleep(WARMUP_S * 1000);
  const first = await reading(url, tally);
  await sleep(started + (WARMUP_S + WINDOW_S) * 1000 - performance.now());
  const last = await reading(url, tally);
  // autocannon counts a non-2xx answer without saying what it was; the tally has its text.
  const origin = await load.catch((error: Error) => {
    throw new Error(`${error.message}; ${failedCalls(tally)}`);
  });
  if (tally.failed > 0) throw new Error(failedCalls(tally));

  const catchUp = await converged(url);
  const eventsPerSec = rate(first.applied, last.applied, (a) => a.applied);
  const delays = streamDelays(first.applied.value, last.applied.value);

  // Evenly paced at most half what west applied under saturation, so that it keeps up: the delay
  // of a stream that is not behind.
  const pacedCallsPerSec = Math.max(1, Math.floor(eventsPerSec / 2 / BATCH_OPS));
  const beforePaced = await readApplied(url);
  await pacedLoad(url, lifecycle, pacedCallsPerSec);
  if (tally.failed > 0) throw new Error(failedCalls(tally));
  const pacedCatchUp = await converged(url);
  const pacedDelays = streamDelays(beforePaced, pacedCatchUp.final);

  const figures = {
    flushMs: FLUSH_MS,
    outboxCap: OUTBOX_CAP,
    connections: CONNECTIONS,
    opsPerCall: BATCH_OPS,
    windowSeconds: (last.applied.atMs - first.applied.atMs) / 1000,
    /** How long the readings took (their times are the middles): the peer's, the origin's. */
    peerReadingMs: Math.max(first.applied.tookMs, last.applied.tookMs),
    originReadingMs: Math.max(first.stream.tookMs, last.stream.tookMs),
    eventsPerSec,
    originEventsPerSec: rate(first.stream, last.stream, (s) => s.accepted),
    originOpsPerSec: rate(first.answered, last.answered, (n) => n * BATCH_OPS),
    originBatchP50Ms: origin.p50Ms,
    originBatchP99Ms: origin.p99Ms,
    p50DelayMsUpperBound: delays.p50MsUpperBound,
    p99DelayMsUpperBound: delays.p99MsUpperBound,
    meanDelayMs: delays.meanMs,
    lagEventsAtWindowStart: first.stream.value.queued,
    lagEventsAtWindowEnd: last.stream.value.queued,
    catchUpSeconds: catchUp.seconds,
    /** The origin idle: how fast the peer is caught up (null when it was not behind). */
    catchUpEventsPerSec: catchUp.seconds > 0 ? catchUp.behind / catchUp.seconds : null,
    pacedSeconds: PACED_S,
    pacedCallsPerSec,
    pacedEventsPerSec: pacedDelays.events / PACED_S,
    pacedP50DelayMsUpperBound: pacedDelays.p50MsUpperBound,
    pacedP99DelayMsUpperBound: pacedDelays.p99MsUpperBound,
    pacedMeanDelayMs: pacedDelays.meanMs,
    eventsAccepted: pacedCatchUp.stream.accepted,
    eventsDeduplicated: pacedCatchUp.final.deduplicated,
    loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
  };
  process.stdout.write(`@@bench ${JSON.stringify(figures)}\n`);
} finally {
  await worker.stop();
}
