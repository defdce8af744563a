import { trend } from "./checks.mjs";

export const mb = (bytes) => (bytes / 2 ** 20).toFixed(1);

/**
 * The heap's verdict. Steady is the first reading once the load has run two expiry ages: the live
 * set is bounded by then (by SOAK_LIVE_TARGET and by the age at which requests are ended), and so
 * are the merge records replication keeps per request id, so further growth is something kept per
 * request. The bounds: 10% + 1 MB over steady absorbs the live set's own wobble (which requests are
 * live, how many prompt blocks they share, the outbox between flushes) while 100 bytes kept per
 * request, 10 MB over the run, still fails; the slope bound, 100 KB per 10,000 requests (10 bytes a
 * request), would take more than ten million requests to cost an isolate 100 of its 128 MB.
 * @param {{ ops: number, t: number, heap: number, rss: number, live: number }[]} readings during the load
 * @param {{ steadyAfterSeconds: number, slopeKB: number }} bounds SOAK_EXPIRY_SECONDS × 2, SOAK_HEAP_SLOPE_KB
 */
export function heapCheck(readings, start, end, { steadyAfterSeconds, slopeKB }) {
  const index = readings.findIndex((r) => r.t >= steadyAfterSeconds);
  const steady = index < 0 ? undefined : readings[index];
  const after = index < 0 ? [] : [...readings.slice(index), end];
  const slope = trend(after, "ops", "heap") * 10_000;
  const rss = readings.map((r) => r.rss).filter(Number.isFinite);
  const figures = {
    startMB: +mb(start.heap),
    steadyMB: steady ? +mb(steady.heap) : null,
    steadyAtRequests: steady?.ops ?? null,
    endMB: +mb(end.heap),
    maxMB: +mb(Math.max(...readings.map((r) => r.heap), end.heap)),
    slopeKBPer10k: +(slope / 1024).toFixed(1),
    rssStartMB: +mb(start.rss),
    rssEndMB: +mb(end.rss),
    rssMaxMB: +mb(Math.max(...rss, end.rss)),
  };
  if (!steady || after.length < 4) {
    return {
      ok: false,
      figures,
      detail: `never steady: ${after.length} readings after ${steadyAfterSeconds} s`,
    };
  }
  const ok = end.heap <= steady.heap * 1.1 + 2 ** 20 && slope <= slopeKB * 1024;
  const detail =
    `heap ${figures.startMB} MB at start, ${figures.steadyMB} MB steady (at ${steady.ops} requests), ` +
    `${figures.endMB} MB at end, max ${figures.maxMB} MB, slope ${figures.slopeKBPer10k} KB per 10,000 ` +
    `requests over ${after.length} readings; RSS (context, not checked) ${figures.rssStartMB} → ` +
    `${figures.rssEndMB} MB, max ${figures.rssMaxMB} MB`;
  return { ok, figures, detail };
}
