/**
 * `POST /batch` inside the object: lifecycle ops applied in order through the same tracker calls as
 * their single routes, at one clock reading, each answered with the status its own route would give.
 * The ops share one synchronous step, so their SQLite writes commit together and the alarm and the
 * replication flush are scheduled once for the whole batch.
 */
import type { Tracker } from "./core/tracker";
import { MAX_BATCH_OPS } from "./limits";
import { STATUS_OF_CODE } from "./status";
import type { BatchOp, BatchOpResult, Result } from "./types";
import type { TrackerOp } from "./metrics/metrics-types";

/** Called with each op's outcome, as the single routes count theirs. */
export type OpRecorder = (op: TrackerOp, result: Result) => void;

export function applyBatch(
  tracker: Tracker,
  ops: readonly BatchOp[],
  now: number,
  record: OpRecorder,
): Result<{ results: BatchOpResult[] }> {
  if (ops.length > MAX_BATCH_OPS) {
    return {
      ok: false,
      code: "too_large",
      message: `a batch takes at most ${MAX_BATCH_OPS} ops, got ${ops.length}`,
    };
  }
  const results: BatchOpResult[] = [];
  for (const op of ops) {
    let result: Result;
    if (op.op === "add") {
      result = tracker.add(
        {
          requestId: op.requestId,
          workerId: op.workerId,
          dpRank: op.dpRank,
          hashes: op.hashes,
          newIslTokens: op.newIslTokens,
          expectedOutputTokens: op.expectedOutputTokens,
          expectedPrefillDurationMs: op.expectedPrefillDurationMs,
          ...(op.owner !== undefined && { owner: op.owner }),
        },
        now,
      );
    } else if (op.op === "prefill_complete") result = tracker.prefillComplete(op.requestId, now);
    else result = tracker.free(op.requestId, now);
    record(op.op, result);
    if (result.ok) results.push({ status: op.op === "add" ? 201 : 200 });
    // Lifecycle ops fail only with client-side codes; none of them answers 503 (`no_worker` is `/route`'s).
    else
      results.push({ status: STATUS_OF_CODE[result.code] as BatchOpResult["status"], error: result.message });
  }
  return { ok: true, results };
}
