/**
 * The HTTP scenarios, all against one tracker object (one model): the bare round trip, an `/add`
 * then `/free` per request id, `/potential_loads` over a book of live requests, and `/batch` calls of
 * 256 lifecycle ops.
 */
import type { Request } from "autocannon";
import { type AddBodies, batch, type Format, free, headersOf, idOp, potentialLoads } from "./bodies";
import { type LoadFigures, load } from "./load";

/** Ops per `/batch` call: 86 adds, 85 prefill completions, 85 frees. */
export const BATCH_OPS = 256;
const BATCH_ADDS = 86;
const BATCH_OTHERS = 85;
/** Live requests behind the `/potential_loads` runs. */
export const QUERY_BOOK = 1_000;

let nextId = 0;
const freshId = () => `h${(nextId++).toString(36)}`;

export function health(url: string): Promise<LoadFigures> {
  return load("GET /health", { url: `${url}health` });
}

/** Each pass over `requests` books a fresh id and frees it; requests/s counts both calls. */
export function addFree(url: string, format: Format, bodies: AddBodies): Promise<LoadFigures> {
  let n = 0;
  const headers = headersOf(format);
  const requests: Request[] = [
    {
      method: "POST",
      path: "/add",
      headers,
      setupRequest: (req, context) => {
        context.id = freshId();
        return { ...req, body: bodies.add(format, n++, context.id as string) };
      },
    },
    {
      method: "POST",
      path: "/free",
      headers,
      setupRequest: (req, context) => ({ ...req, body: free(format, context.id as string) }),
    },
  ];
  return load(`POST /add + /free (${format})`, { url, requests });
}

export function queries(url: string, format: Format): Promise<LoadFigures> {
  const bodies = potentialLoads(format, 64, QUERY_BOOK);
  let q = 0;
  const requests: Request[] = [
    {
      method: "POST",
      path: "/potential_loads",
      headers: headersOf(format),
      setupRequest: (req) => ({ ...req, body: bodies[q++ % bodies.length]! }),
    },
  ];
  return load(`POST /potential_loads (${format})`, { url, requests });
}

/** Calls of a `/batch` load answered so far, and those among them with an op that did not answer 2xx. */
export interface BatchTally {
  answered: number;
  failed: number;
  /** The first failed call's status and the start of its answer, to say why. */
  firstFailure?: string;
}

/**
 * `/batch` in MessagePack. A call adds 86 fresh requests, completes the prefill of 85 added by
 * earlier calls that have answered, and frees 85 whose prefill completed; ids travel through two
 * queues filled only from answered calls, so no op can name a request still in flight. Until the
 * queues fill, frees of unknown ids (a 200 no-op) keep every call at 256 ops. Every op must answer
 * 2xx: an op's failure is the only way an `error` key enters the answer. `headers` default to
 * MessagePack's; the replication benchmark adds the replica's.
 */
export function batchLifecycle(bodies: AddBodies, headers = headersOf("msgpack")): BatchLifecycle {
  const added: string[] = [];
  const prefilled: string[] = [];
  let n = 0;
  const tally: BatchTally = { answered: 0, failed: 0 };
  const next = (context: Record<string, unknown>) => {
    const adds = Array.from({ length: BATCH_ADDS }, freshId);
    const prefills = added.splice(0, BATCH_OTHERS);
    const frees = prefilled.splice(0, BATCH_OTHERS);
    while (frees.length < BATCH_OPS - BATCH_ADDS - prefills.length) frees.push(freshId());
    Object.assign(context, { adds, prefills });
    const ops = adds.map((id) => bodies.addOp(n++, id));
    for (const id of prefills) ops.push(idOp("prefill_complete", id));
    for (const id of frees) ops.push(idOp("free", id));
    return batch(ops);
  };
  const answered = (status: number, body: string, context: Record<string, unknown>) => {
    tally.answered++;
    if (status !== 200 || body.includes("error")) {
      tally.failed++;
      tally.firstFailure ??= `${status} ${body.slice(0, 200)}`;
    }
    added.push(...(context.adds as string[]));
    prefilled.push(...(context.prefills as string[]));
  };
  const requests: Request[] = [
    {
      method: "POST",
      path: "/batch",
      headers,
      setupRequest: (req, context) => ({ ...req, body: next(context) }),
      onResponse: answered,
    },
  ];
  return { requests, tally, headers, next, answered };
}

/** A `/batch` load's calls, for autocannon (`requests`) or a client of one's own (`next`, `answered`). */
export interface BatchLifecycle {
  requests: Request[];
  tally: BatchTally;
  headers: Record<string, string>;
  /** The next call's body; `context` carries its ids to `answered`. */
  next: (context: Record<string, unknown>) => Buffer;
  answered: (status: number, body: string, context: Record<string, unknown>) => void;
}

export async function batches(
  url: string,
  bodies: AddBodies,
): Promise<{ figures: LoadFigures; opsPerSec: number }> {
  const { requests, tally } = batchLifecycle(bodies);
  const figures = await load(`POST /batch, ${BATCH_OPS} ops (msgpack)`, { url, requests });
  if (tally.failed > 0) throw new Error(failedCalls(tally));
  return { figures, opsPerSec: figures.requestsPerSec * BATCH_OPS };
}

/** How a `/batch` load with failed calls fails: how many, and the first one's answer. */
export function failedCalls(tally: BatchTally): string {
  return `/batch: ${tally.failed} calls had ops that did not answer 2xx; the first: ${tally.firstFailure}`;
}
