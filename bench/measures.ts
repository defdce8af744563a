/**
 * What the in-process bench parts measure with (run them under `node --expose-gc`): the heap after
 * forced collections, and percentiles of sorted samples.
 */
import { cpus, loadavg } from "node:os";

const gc = (globalThis as { gc?: () => void }).gc;

/** `heapUsed + arrayBuffers` after two forced collections (typed arrays count as the heap they are). */
export function heapBytes(): number {
  if (!gc) throw new Error("run with node --expose-gc");
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** The `p` quantile (0..1) of ascending `sorted`, nearest rank. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

/** The machine a figure was measured on, as every part reports it. */
export function machine() {
  return {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
  };
}
