/**
 * `POST /kv_events` under load: each autocannon connection is one engine publisher, on a rank of
 * its own of the trace's 64 (8 workers × 8 ranks), posting one engine batch of
 * {@link EVENTS_PER_CALL} events per call in vLLM's array form, its sequence numbers consecutive:
 * 16 chains of 12 one-block `BlockStored` events (16 tokens each, a parent but the first), and
 * `BlockRemoved` of the last 4 blocks of each chain stored {@link REMOVE_LAG} calls earlier, deepest
 * first, so every removal takes a leaf, as an engine's LRU does. Bodies are built per call; the
 * figure is batches applied per second by the one tracker object, and the rows SQLite wrote per
 * 1,000 events (from `/metrics`).
 */
import { encode } from "@msgpack/msgpack";
import type { Request } from "autocannon";
import { DP_SIZE, WORKER_IDS } from "../core/trace";
import { MODEL } from "./bodies";
import { CONNECTIONS, type LoadFigures, load } from "./load";

export const EVENTS_PER_CALL = 256;
const CHAINS = 16;
const CHAIN_BLOCKS = 12;
const REMOVED_PER_CHAIN = 4;
const REMOVE_LAG = 8;
const BLOCK = 16;
const MSGPACK = { useBigInt64: true } as const;

interface Publisher {
  rank: number;
  seq: number;
  /** Engine hash of chain `c`, block `b` of call `n`: distinct across calls, chains and publishers. */
}

const hashOf = (rank: number, call: number, chain: number, block: number) =>
  (BigInt(rank + 1) << 48n) | (BigInt(call) << 16n) | BigInt(chain * CHAIN_BLOCKS + block);

function body(p: Publisher): Buffer {
  const call = p.seq;
  const events: unknown[] = [];
  for (let c = 0; c < CHAINS; c++) {
    for (let b = 0; b < CHAIN_BLOCKS; b++) {
      const first = ((p.rank * 1_000_003 + call * 4_099 + c * CHAIN_BLOCKS + b) * BLOCK) % 100_000;
      const tokens = Array.from({ length: BLOCK }, (_, t) => first + t);
      const parent = b === 0 ? null : hashOf(p.rank, call, c, b - 1);
      events.push(["BlockStored", [hashOf(p.rank, call, c, b)], parent, tokens, BLOCK, null, "GPU", null]);
    }
  }
  const old = call - REMOVE_LAG;
  for (let c = 0; c < CHAINS; c++) {
    for (let k = 0; k < REMOVED_PER_CHAIN; k++) {
      // Before the lag has passed there is nothing to evict: hashes the rank never stored (no-ops).
      const hash = old >= 0 ? hashOf(p.rank, old, c, CHAIN_BLOCKS - 1 - k) : hashOf(p.rank, 0xffff, c, k);
      events.push(["BlockRemoved", [hash], "GPU"]);
    }
  }
  return Buffer.from(encode([Date.now() / 1000, events, p.rank % DP_SIZE], MSGPACK));
}

async function rowsWritten(url: string): Promise<number> {
  const text = await (await fetch(`${url}metrics?model_name=${MODEL}`)).text();
  let rows = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("slot_tracker_sqlite_rows_written_total{")) rows += Number(line.split(" ").at(-1));
  }
  return rows;
}

export async function kvEventLoad(
  url: string,
): Promise<{ figures: LoadFigures; eventsPerSec: number; rowsPer1000Events: number }> {
  let publishers = 0;
  let failed = "";
  let events = 0;
  const requests: Request[] = [
    {
      method: "POST",
      setupRequest: (req, context) => {
        const ctx = context as { publisher?: Publisher };
        ctx.publisher ??= { rank: publishers++ % (WORKER_IDS.length * DP_SIZE), seq: 0 };
        const p = ctx.publisher;
        const worker = WORKER_IDS[Math.floor(p.rank / DP_SIZE)]!;
        return {
          ...req,
          path: `/kv_events?model_name=${MODEL}&worker_id=${worker}&dp_rank=${p.rank % DP_SIZE}`,
          headers: {
            "content-type": "application/msgpack",
            "x-kv-event-seq": String(p.seq),
            "x-kv-event-epoch": `bench-${p.rank}`,
          },
          body: body(p),
        };
      },
      onResponse: (status, text, context) => {
        const p = (context as { publisher: Publisher }).publisher;
        if (status === 200) {
          p.seq++;
          events += EVENTS_PER_CALL;
        } else failed ||= `${status} ${text.slice(0, 200)}`;
      },
    },
  ];
  if (CONNECTIONS > WORKER_IDS.length * DP_SIZE) throw new Error("more connections than ranks");
  const before = await rowsWritten(url);
  const eventsBefore = events;
  const figures = await load(`POST /kv_events, ${EVENTS_PER_CALL} events (msgpack)`, { url, requests }).catch(
    (error: Error) => {
      // The first refusal's text says why, where autocannon's counts only say how many.
      throw new Error(`${error.message}; first refusal: ${failed}`);
    },
  );
  if (failed) throw new Error(`/kv_events: ${failed}`);
  const rows = (await rowsWritten(url)) - before;
  return {
    figures,
    eventsPerSec: figures.requestsPerSec * EVENTS_PER_CALL,
    rowsPer1000Events: (rows / (events - eventsBefore)) * 1000,
  };
}
