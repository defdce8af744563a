/**
 * `/selection/select_and_reserve` + `DELETE /selection/reservations/{id}` over HTTP, against the
 * Worker from `wrangler.toml` and the platform floor (`bench/floor`, whose selection routes only
 * carry each body or id to a Durable Object, write it as one row and answer a ready answer of the
 * service's shape), as the HTTP part measures its scenarios. argv[2] is the repo root.
 *
 * The tracker has 16 catalog workers × 4 DP ranks (`POST /selection/workers`) and 1,000 live bookings
 * made before the load; each pass of the load books a fresh id with a 2,048-token prompt
 * (`token_ids`, hashed by the service) and ends it, so the book stays near 1,000 + connections. The
 * prompts are `prompts.ts`'s, continuing the families of the live ones. Prints one JSON line.
 *
 * How the ratio is measured, and why. On one machine within an hour, the same code gave:
 * - one run of each, service then floor (this part's first design): 0.66 to 0.78;
 * - rounds of one run each, alternating: whichever ran right after the switch was slower (service
 *   first: 0.80, 0.85, 0.92; floor first: 0.74, 0.77);
 * - rounds in a mirrored order (service, floor, floor, service) with an unmeasured lead-in before
 *   each run: rounds within one pair of runtimes agreed to ±0.04, while two pairs of runtimes started
 *   afresh gave 0.85 and 0.75. A runtime's speed is partly its own (where its heap lands, what its
 *   compiler made of the hot code), for the floor's as for the service's.
 * So the figure is the median of {@link SESSIONS} sessions, each with runtimes of its own started
 * afresh, and a session's ratio is its service pairs over its floor pairs in two mirrored rounds
 * (service, floor, floor, service; then floor, service, service, floor), every run of
 * {@link RUN_S} s after {@link SETTLE_S} s unmeasured against the same Worker. Within a session
 * each side runs first and last equally often, so neither order nor steady drift favours one.
 * Sessions of the same code still spread from 0.73 to 0.86 on a 2-core machine whose speed changes
 * from minute to minute, so there are five: the median of five moves less with one outlying session
 * than the median of three did.
 */
import type { Request } from "autocannon";
import { CONNECTIONS, type LoadFigures, load, measure } from "../http/load";
import { post, withServiceAndFloor } from "../http/worker";
import { BLOCK_SIZE, workerIds } from "./partition";
import { promptTokens } from "./prompts";

const MODEL = "bench-selection";
const WORKERS = 16;
const DP_SIZE = 4;
const LIVE_BOOK = 1_000;
/**
 * Prompts the load cycles through, after the live book's (bodies encoded once, ~12 KB each). More
 * than the bookings whose own blocks the cache index's default cap keeps (200,000 entries ÷ 64, about
 * 3,100), so a prompt comes round again only after its blocks were evicted: every booking records 64
 * new blocks (and 64 more entries when its family's prefix is not on the rank it goes to, about
 * 57 a booking here) and evicts as many entries, the index's dearest case, however many pairs a
 * machine runs.
 */
const POOL = 8_192;
const BOOKING_CONCURRENCY = 8;
/** Sessions (odd, so the median is one session's), and each run's measured and lead-in seconds. */
const SESSIONS = 5;
const RUN_S = 5;
const SETTLE_S = 2;
const WARMUP_S = 2;
const JSON_TYPE = { "content-type": "application/json" };

const root = process.argv[2] ?? "";
if (!root) throw new Error("usage: selection-http.mjs <repo root>");

/** The body of a booking of prompt `i` under `id`: everything but the id encoded once. */
class BookingBodies {
  private readonly tails: string[];

  constructor(from: number, count: number) {
    this.tails = Array.from(
      { length: count },
      (_, k) => `,"token_ids":[${promptTokens(from + k).join(",")}]}`,
    );
  }

  body(n: number, id: string): string {
    return `{"model_name":"${MODEL}","selection_id":"${id}"${this.tails[n % this.tails.length]}`;
  }
}

let nextId = 0;
const freshId = () => `r${(nextId++).toString(36)}`;

const PAIRS_SCENARIO = "POST /selection/select_and_reserve + DELETE /selection/reservations/{id}";

/** Each pass books a fresh id and ends it; requests/s counts both calls. */
function pairRequests(bodies: BookingBodies): Request[] {
  let n = 0;
  return [
    {
      method: "POST",
      path: "/selection/select_and_reserve",
      headers: JSON_TYPE,
      setupRequest: (req, context) => {
        context.id = freshId();
        return { ...req, body: bodies.body(n++, context.id as string) };
      },
    },
    {
      method: "DELETE",
      setupRequest: (req, context) => ({ ...req, path: `/selection/reservations/${context.id as string}` }),
    },
  ];
}

/** A session's runs of one side, in the order they ran. */
interface SessionRuns {
  service: LoadFigures[];
  floor: LoadFigures[];
}

/**
 * Warms both up, then runs the two mirrored rounds: service, floor, floor, service, floor, service,
 * service, floor, each measured run after an unmeasured lead-in against the same Worker (the first
 * seconds after a switch are slower for whichever side runs then). Every run's answers are checked
 * as `measure` checks them.
 */
async function pairRuns(serviceUrl: string, floorUrl: string, bodies: BookingBodies): Promise<SessionRuns> {
  // One request list a side, so each side's prompts go on where its last run stopped.
  const requests = new Map([serviceUrl, floorUrl].map((url) => [url, pairRequests(bodies)]));
  const run = (url: string, seconds: number) =>
    measure(PAIRS_SCENARIO, seconds, { url, requests: requests.get(url)! });
  await run(serviceUrl, WARMUP_S);
  await run(floorUrl, WARMUP_S);
  const runs: SessionRuns = { service: [], floor: [] };
  const S = serviceUrl;
  const F = floorUrl;
  for (const url of [S, F, F, S, F, S, S, F]) {
    await run(url, SETTLE_S);
    (url === S ? runs.service : runs.floor).push(await run(url, RUN_S));
  }
  return runs;
}

/** Pairs per second over `runs` together: their requests over their seconds, two requests a pair. */
function pairsPerSec(runs: LoadFigures[]): number {
  const requests = runs.reduce((sum, r) => sum + r.requests, 0);
  const seconds = runs.reduce((sum, r) => sum + r.requests / r.requestsPerSec, 0);
  return requests / seconds / 2;
}

/** A side's runs as one row: their rate together, the lower median of their p50s and the highest p99. */
function together(runs: LoadFigures[]): LoadFigures {
  const p50s = runs.map((r) => r.p50Ms).sort((a, b) => a - b);
  return {
    scenario: runs[0]!.scenario,
    requestsPerSec: 2 * pairsPerSec(runs),
    p50Ms: p50s[Math.floor((p50s.length - 1) / 2)]!,
    p99Ms: Math.max(...runs.map((r) => r.p99Ms)),
    requests: runs.reduce((sum, r) => sum + r.requests, 0),
  };
}

async function prepare(url: string): Promise<void> {
  for (const workerId of workerIds(WORKERS)) {
    const record = `{"worker_id":${workerId},"model_name":"${MODEL}","endpoint":"http://w${workerId}:8000","block_size":${BLOCK_SIZE},"data_parallel_start_rank":0,"data_parallel_size":${DP_SIZE}}`;
    const answer = await (await post(url, "/selection/workers", record)).json();
    if ((answer as { lifecycle?: string }).lifecycle !== "schedulable") {
      throw new Error(`catalog worker ${workerId}: ${JSON.stringify(answer)}`);
    }
  }
  const book = new BookingBodies(0, LIVE_BOOK);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < LIVE_BOOK; i = next++) {
      await post(url, "/selection/select_and_reserve", book.body(i, `live-${i}`));
    }
  };
  await Promise.all(Array.from({ length: BOOKING_CONCURRENCY }, lane));
}

/** Live bookings of the partition, as `GET /selection/loads` counts them. */
async function liveBookings(url: string): Promise<number> {
  const res = await fetch(`${url}selection/loads?model_name=${MODEL}`);
  const rows = (await res.json()) as { loads: { active_requests: number }[] }[];
  return rows.flatMap((r) => r.loads).reduce((sum, l) => sum + l.active_requests, 0);
}

/** One session's figures: its pairs runs, with `GET /health` too in the first. */
interface Session {
  health?: { service: LoadFigures; floor: LoadFigures };
  runs: SessionRuns;
  ratio: number;
  liveAfter: number;
}

/** Starts the two Worker runtimes afresh, prepares the tracker, measures, and stops both. */
function session(withHealth: boolean): Promise<Session> {
  return withServiceAndFloor(root, async (serviceUrl, floorUrl) => {
    await prepare(serviceUrl);
    const bodies = new BookingBodies(LIVE_BOOK, POOL);
    const healthOf = (url: string) => load("GET /health", { url: `${url}health` });
    const health = withHealth
      ? { service: await healthOf(serviceUrl), floor: await healthOf(floorUrl) }
      : undefined;
    const runs = await pairRuns(serviceUrl, floorUrl, bodies);
    const liveAfter = await liveBookings(serviceUrl);
    // Every pass ended what it booked, but for the last pass of each connection in each run against
    // the service (warm-up, lead-ins and measured), which autocannon may stop between its two calls.
    const serviceRuns = 1 + 2 * runs.service.length;
    const unended = liveAfter - LIVE_BOOK;
    if (unended < 0 || unended > serviceRuns * CONNECTIONS) {
      throw new Error(
        `${liveAfter} live bookings after the load: ${LIVE_BOOK} + at most ${serviceRuns * CONNECTIONS} expected`,
      );
    }
    return {
      ...(health && { health }),
      runs,
      ratio: pairsPerSec(runs.service) / pairsPerSec(runs.floor),
      liveAfter,
    };
  });
}

const sessions: Session[] = [];
for (let i = 0; i < SESSIONS; i++) sessions.push(await session(i === 0));
const median = [...sessions].sort((a, b) => a.ratio - b.ratio)[(SESSIONS - 1) / 2]!;
const health = sessions[0]!.health!;
const serviceRow = together(median.runs.service);
const floorRow = together(median.runs.floor);
process.stdout.write(
  `@@bench ${JSON.stringify({
    connections: CONNECTIONS,
    ranks: WORKERS * DP_SIZE,
    liveBook: LIVE_BOOK,
    promptTokens: promptTokens(0).length,
    liveAfter: median.liveAfter,
    runSeconds: RUN_S,
    sessions: sessions.map((s) => ({
      pairsPerSec: pairsPerSec(s.runs.service),
      floorPairsPerSec: pairsPerSec(s.runs.floor),
      ratio: s.ratio,
    })),
    scenarios: [health.service, serviceRow],
    pairsPerSec: serviceRow.requestsPerSec / 2,
    floor: { scenarios: [health.floor, floorRow], pairsPerSec: floorRow.requestsPerSec / 2 },
    ratio: median.ratio,
  })}\n`,
);
