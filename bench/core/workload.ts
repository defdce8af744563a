/**
 * Drives a subject through the trace. Request `i` is booked at `T0 + i` ms; while the book holds N
 * requests, booking `i` also completes the prefill of `i − N/2` and frees `i − N`, so the book stays
 * at N live requests, half of them still prefilling. One such step is a *cycle*.
 *
 * Inputs are materialized before the timed loop, fresh per subject (RPC hands the tracker fresh
 * strings and arrays too): the timed loop measures the tracker, not the trace generator.
 */
import type { Booking, Subject } from "./subjects";
import { promptArray, requestOf } from "./trace";

export const T0 = 1_700_000_000_000;

/**
 * The book sizes N the core is measured at, in both of its processes: the benchmark and the floor
 * beside it (the target "at every N" needs the floor at each N the core reports).
 */
export const BOOK_SIZES = [1_000, 10_000, 100_000];

export interface Batch<H> {
  from: number;
  adds: Booking<H>[];
  /** Id whose prefill completes in each step, or null. */
  prefills: (string | null)[];
  /** Id freed in each step, or null. */
  frees: (string | null)[];
}

/** Steps `from ..< to` of a book of `live` requests, with prompts in the subject's form. */
export function materialize<H>(
  from: number,
  to: number,
  live: number,
  form: (hashes: BigUint64Array) => H,
): Batch<H> {
  const batch: Batch<H> = { from, adds: [], prefills: [], frees: [] };
  const half = live >> 1;
  for (let i = from; i < to; i++) {
    const r = requestOf(i);
    batch.adds.push({
      id: r.id,
      worker: r.worker,
      dpRank: r.dpRank,
      newIslTokens: r.newIslTokens,
      hashes: form(promptArray(i, r.family)),
    });
    batch.prefills.push(i >= half ? `req-${i - half}` : null);
    batch.frees.push(i >= live ? `req-${i - live}` : null);
  }
  return batch;
}

export function run<H>(subject: Subject<H>, batch: Batch<H>): void {
  const { adds, prefills, frees } = batch;
  for (let k = 0; k < adds.length; k++) {
    const now = T0 + batch.from + k;
    subject.add(adds[k]!, now);
    const prefill = prefills[k];
    if (prefill !== null && prefill !== undefined) subject.prefillComplete(prefill, now);
    const free = frees[k];
    if (free !== null && free !== undefined) subject.free(free, now);
  }
}

/** Brings a fresh subject to `live` requests, in chunks so the inputs never pile up. */
export function fill<H>(subject: Subject<H>, live: number, form: (hashes: BigUint64Array) => H): void {
  const CHUNK = 10_000;
  for (let from = 0; from < live; from += CHUNK) {
    run(subject, materialize(from, Math.min(live, from + CHUNK), live, form));
  }
}
