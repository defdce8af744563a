/**
 * A `POST /kv_events` call (SPEC §9): one (worker, rank)'s engine batches, numbered from the
 * call's `seq`. Checked whole before anything changes, so a refused call changes nothing:
 *
 * - the rank must be one of a registered worker's, every stored block of the tracker's block size,
 *   every batch's `data_parallel_rank` (when it names one) the call's rank;
 * - a call in the current epoch of this replica's own making continues its sequence: a batch number
 *   already applied is acknowledged and ignored, one past the next expected refuses the whole call
 *   (`sequence_gap`, with the number expected, so the sender can replay from there);
 * - any other epoch name, or an epoch another replica started (`kv-stream.ts`), starts a new epoch
 *   at this call's key: the rank is cleared, and the call's first batch sets the sequence.
 *
 * An accepted call is one change: applied, persisted as one journal row and one stream row, and
 * shipped to the other replicas as one `kv_events` event, its stored blocks timed by its key.
 */
import type { KvEventsAck, KvEventsInput, KvStoredOp } from "../../kv-event-types";
import type { Failure, Result } from "../../types";
import { fail, rankText, text } from "../messages";
import { physicalMs } from "../replica/clock";
import type { Tracker } from "../tracker";
import type { KvChange } from "./kv-stream";

/** A refused out-of-sequence call, with the number the rank expects next. */
export type KvGap = Failure & { expectedSeq: number };

export function acceptKvEvents(
  tracker: Tracker,
  input: KvEventsInput,
  now: number,
): Result<KvEventsAck> | KvGap {
  tracker.expire(now);
  const { workerId, dpRank, seq, epoch, batches } = input;
  if (!tracker.exists) return fail("tracker_not_found", text.trackerNotFound(tracker.model, tracker.tenant));
  if (!tracker.book.slotOf(workerId, dpRank))
    return fail("rank_not_found", text.rankNotFound(workerId, dpRank));
  const invalid = checkBatches(input, tracker.blockSize!);
  if (invalid) return fail("invalid_input", invalid);
  const { kv } = tracker;
  let stream = kv.stream(workerId, dpRank);
  const current = stream && stream.epoch.name === epoch && stream.epoch.key.origin === tracker.origin;
  let skip = 0;
  if (stream && current) {
    if (seq > stream.nextSeq) {
      kv.counters.gaps++;
      return {
        ...fail(
          "sequence_gap",
          `KV event batch ${seq} is out of sequence for worker ${rankText(workerId, dpRank)} in epoch ${JSON.stringify(epoch)}: expected ${stream.nextSeq}`,
        ),
        expectedSeq: stream.nextSeq,
      };
    }
    skip = Math.min(batches.length, stream.nextSeq - seq);
    if (skip === batches.length) {
      kv.counters.batchesIgnored += skip;
      return { ok: true, applied: 0, ignored: skip, nextSeq: stream.nextSeq };
    }
  }
  const key = tracker.stamp(now);
  if (!stream || !current) stream = kv.startEpoch(workerId, dpRank, { name: epoch, key }, seq);
  const at = physicalMs(key.ts);
  const changes: KvChange[] = [];
  let engineAt = 0;
  for (let b = skip; b < batches.length; b++) {
    const batch = batches[b]!;
    engineAt = Math.max(engineAt, batch.at);
    for (const op of batch.ops) changes.push(op.kind === "stored" ? storedChange(op, at) : op);
  }
  const firstSeq = seq + skip;
  const count = batches.length - skip;
  kv.apply(stream, changes, seq + batches.length, count);
  kv.counters.batchesIgnored += skip;
  if (engineAt > 0) kv.lagMs.set(`${workerId}:${dpRank}`, Math.max(0, now - engineAt));
  tracker.emitExternal({
    ...key,
    type: "kv_events",
    workerId,
    dpRank,
    epoch: stream.epoch,
    firstSeq,
    count,
    changes,
  });
  return { ok: true, applied: count, ignored: skip, nextSeq: stream.nextSeq };
}

function storedChange(op: KvStoredOp, at: number): KvChange {
  const { tier, engineHashes, parent, localHashes } = op;
  return { kind: "stored", tier, engineHashes, parent, localHashes, at };
}

/** Why the call's batches cannot be applied to its rank, or null. */
function checkBatches(input: KvEventsInput, blockSize: number): string | null {
  for (const [b, batch] of input.batches.entries()) {
    if (batch.dpRank !== null && batch.dpRank !== input.dpRank) {
      return `batch ${b} is for data_parallel_rank ${batch.dpRank}, but the call is for dp_rank ${input.dpRank}`;
    }
    for (const [e, op] of batch.ops.entries()) {
      if (op.kind === "stored" && op.blockSize !== blockSize) {
        return `batch ${b} event ${e}: block_size ${op.blockSize} does not match the tracker's block_size ${blockSize}`;
      }
    }
  }
  return null;
}
