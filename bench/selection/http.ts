/**
 * `/selection/select_and_reserve` + `DELETE /selection/reservations/{id}` over HTTP, against the
 * Worker from `wrangler.toml` and, at once after, the platform floor (`bench/floor`, whose selection
 * routes only carry each body or id to a Durable Object, write it as one row and answer a ready
 * answer of the service's shape), as the HTTP part measures its scenarios. argv[2] is the repo root.
 *
 * The tracker has 16 catalog workers × 4 DP ranks (`POST /selection/workers`) and 1,000 live bookings
 * made before the load; each pass of the load books a fresh id with a 2,048-token prompt
 * (`token_ids`, hashed by the service) and ends it, so the book stays near 1,000 + connections. The
 * prompts are `prompts.ts`'s, continuing the families of the live ones. Prints one JSON line.
 */
import type { Request } from "autocannon";
import { CONNECTIONS, type LoadFigures, load } from "../http/load";
import { type LocalWorker, post, startLocalWorker } from "../http/worker";
import { BLOCK_SIZE, workerIds } from "./partition";
import { promptTokens } from "./prompts";

const MODEL = "bench-selection";
const WORKERS = 16;
const DP_SIZE = 4;
const LIVE_BOOK = 1_000;
/** Prompts the load cycles through, after the live book's (bodies encoded once). */
const POOL = 2_048;
const BOOKING_CONCURRENCY = 8;
const JSON_TYPE = { "content-type": "application/json" };

const root = process.argv[2];
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

/** Each pass books a fresh id and ends it; requests/s counts both calls. */
function pairs(url: string, bodies: BookingBodies): Promise<LoadFigures> {
  let n = 0;
  const requests: Request[] = [
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
  return load("POST /selection/select_and_reserve + DELETE /selection/reservations/{id}", {
    url,
    requests,
  });
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

const workers: LocalWorker[] = [];
try {
  const service = await startLocalWorker(root);
  workers.push(service);
  const floor = await startLocalWorker(
    root,
    {},
    { dir: "bench/floor", entries: ["wrangler.toml", "worker.ts"] },
  );
  workers.push(floor);
  await prepare(service.url);
  const bodies = new BookingBodies(LIVE_BOOK, POOL);
  const scenarios: LoadFigures[] = [];
  const floorScenarios: LoadFigures[] = [];
  for (const run of [
    (url: string) => load("GET /health", { url: `${url}health` }),
    (url: string) => pairs(url, bodies),
  ]) {
    scenarios.push(await run(service.url));
    floorScenarios.push(await run(floor.url));
  }
  const liveAfter = await liveBookings(service.url);
  // Every pass ended what it booked, but for the last pass of each connection in each of the two
  // runs (warm-up and measured), which autocannon may stop between its two calls.
  const unended = liveAfter - LIVE_BOOK;
  if (unended < 0 || unended > 2 * CONNECTIONS) {
    throw new Error(
      `${liveAfter} live bookings after the load: ${LIVE_BOOK} + at most ${2 * CONNECTIONS} expected`,
    );
  }
  const pairsPerSec = scenarios[1]!.requestsPerSec / 2;
  const floorPairsPerSec = floorScenarios[1]!.requestsPerSec / 2;
  process.stdout.write(
    `@@bench ${JSON.stringify({
      connections: CONNECTIONS,
      ranks: WORKERS * DP_SIZE,
      liveBook: LIVE_BOOK,
      promptTokens: promptTokens(0).length,
      liveAfter,
      scenarios,
      pairsPerSec,
      floor: { scenarios: floorScenarios, pairsPerSec: floorPairsPerSec },
      ratio: pairsPerSec / floorPairsPerSec,
    })}\n`,
  );
} finally {
  for (const worker of workers) await worker.stop();
}
