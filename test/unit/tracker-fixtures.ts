import type { LiveRequest } from "../../durable-objects/core/live-request";
import type { TrackerStore } from "../../durable-objects/core/store";
import { Tracker, type TrackerOptions } from "../../durable-objects/core/tracker";
import type { AddInput, RegisterInput } from "../../durable-objects/types";

/** An arbitrary epoch-ms start, so that tests never depend on the clock starting at 0. */
export const T0 = 1_700_000_000_000;
export const U32_MAX = 2 ** 32 - 1;
export const U64_MAX = 2n ** 64n - 1n;

/** Prompt hashes; negative values wrap to their u64 bits exactly as the routes decode i64 (-1 → 2^64 − 1). */
export function h(...hashes: (number | bigint)[]): BigUint64Array {
  return BigUint64Array.from(hashes.map((x) => BigInt(x)));
}

export function tracker(options: Partial<TrackerOptions> = {}): Tracker {
  return new Tracker({ model: "model", tenant: "default", ...options });
}

export function worker(workerId: bigint | number, dpStart = 0, dpSize = 1, blockSize = 16): RegisterInput {
  return { workerId: BigInt(workerId), blockSize, dpStart, dpSize };
}

export function req(
  requestId: string,
  workerId: bigint | number,
  dpRank: number,
  hashes: BigUint64Array,
  newIslTokens = 0,
  expectedPrefillDurationMs?: number,
): AddInput {
  const input: AddInput = { requestId, workerId: BigInt(workerId), dpRank, hashes, newIslTokens };
  if (expectedPrefillDurationMs !== undefined) input.expectedPrefillDurationMs = expectedPrefillDurationMs;
  return input;
}

/** Active prefill tokens of every rank, in listing order. */
export function prefillTokens(t: Tracker, now: number): number[] {
  return t.listLoads(now).map((l) => l.activePrefillTokens);
}

/** Active decode blocks of every rank, in listing order. */
export function decodeBlocks(t: Tracker, now: number): number[] {
  return t.listLoads(now).map((l) => l.activeDecodeBlocks);
}

interface RequestRow {
  rowid: number;
  input: AddInput;
  startedAt: number;
  prefillDone: boolean;
  anchorAt?: number;
}

/**
 * A store that keeps rows the way the object's SQLite tables would: a worker table and a request
 * table keyed by request id with an autoincrement rowid (add order). Inserts copy their input so
 * that nothing the tracker keeps is shared with the "database".
 */
export class RecordingStore implements TrackerStore {
  readonly workers = new Map<bigint, RegisterInput>();
  readonly requests = new Map<string, RequestRow>();
  private nextRowid = 1;

  workerAdded(input: RegisterInput): void {
    this.workers.set(input.workerId, { ...input });
  }

  workerRemoved(workerId: bigint): void {
    this.workers.delete(workerId);
    for (const [id, row] of this.requests) if (row.input.workerId === workerId) this.requests.delete(id);
  }

  requestAdded(req: LiveRequest, input: AddInput): void {
    const copy = { ...input, hashes: BigUint64Array.from(input.hashes) };
    this.requests.set(req.id, {
      rowid: this.nextRowid++,
      input: copy,
      startedAt: req.startedAt,
      prefillDone: false,
    });
  }

  prefillCompleted(req: LiveRequest): void {
    this.row(req).prefillDone = true;
  }

  anchorMoved(req: LiveRequest, at: number): void {
    this.row(req).anchorAt = at;
  }

  requestRemoved(req: LiveRequest): void {
    this.row(req);
    this.requests.delete(req.id);
  }

  trackerDeleted(): void {
    this.workers.clear();
    this.requests.clear();
  }

  /** A fresh tracker rebuilt from the rows, as the object does after a restart. */
  rebuild(options: Partial<TrackerOptions> = {}): Tracker {
    const restored = tracker(options);
    for (const w of this.workers.values()) restored.restoreWorker(w);
    const rows = [...this.requests.values()].sort((a, b) => a.rowid - b.rowid);
    for (const row of rows) restored.restoreRequest(row.input, row.startedAt, row.prefillDone, row.anchorAt);
    return restored;
  }

  /** An update or delete of a row that does not exist means the tracker reported out of order. */
  private row(req: LiveRequest): RequestRow {
    const row = this.requests.get(req.id);
    if (!row) throw new Error(`store: no row for request ${req.id}`);
    return row;
  }
}
