/**
 * Another replica's KV-event changes, merged so that every replica holds the same index once the
 * same changes have arrived, whatever their order across origins:
 *
 * - one writer per epoch (`kv-stream.ts`), whose events reach a peer in order and at most once, so
 *   within an epoch a peer applies each call's changes exactly when they continue its position;
 * - the newer epoch wins: its first change clears the rank (as it did at its writer), and the changes
 *   of an older epoch arriving later are dropped;
 * - changes older than the worker's newest unregistration known here are dropped: at their writer
 *   the removal came after them and cleared the worker's ranks (`tracker-state.ts`); a worker that
 *   comes back starts new epochs, which clear its ranks anyway;
 * - a snapshot's `kv_rank` parts replace a rank that is behind them (an older epoch, or the same one
 *   at an earlier position): part 0 clears the rank and takes the stream's position, the parts that
 *   follow it in the same snapshot add their runs; a rank at or past the snapshot's position keeps
 *   what it has, since the stream after the snapshot carries the rest.
 */
import type { KvEventsEvent, KvRankEvent } from "../replica/events";
import { compareKeys, type EventKey } from "../replica/clock";
import type { TrackerState } from "../tracker-state";
import { compareEpochs, type KvEpoch, streamKey } from "./kv-stream";

export function mergeKvEvents(tracker: TrackerState, event: KvEventsEvent): void {
  const { workerId, dpRank, epoch, firstSeq, count } = event;
  if (endedAfter(tracker, workerId, epoch.key)) return;
  const { kv } = tracker;
  let stream = kv.stream(workerId, dpRank);
  const order = stream ? compareEpochs(epoch, stream.epoch) : 1;
  if (order < 0) return;
  if (!stream || order > 0) stream = kv.startEpoch(workerId, dpRank, epoch, firstSeq);
  if (firstSeq + count <= stream.nextSeq) return;
  kv.apply(stream, event.changes, firstSeq + count, count);
}

/** The snapshot a rank is being rebuilt from: its epoch and position, by stream key. */
const restoring = new WeakMap<TrackerState, Map<string, { epoch: KvEpoch; nextSeq: number }>>();

export function mergeKvRank(tracker: TrackerState, event: KvRankEvent): void {
  const { workerId, dpRank, epoch, nextSeq, part } = event;
  if (endedAfter(tracker, workerId, epoch.key)) return;
  const { kv } = tracker;
  const key = streamKey(workerId, dpRank);
  let marks = restoring.get(tracker);
  if (!marks) {
    marks = new Map();
    restoring.set(tracker, marks);
  }
  let stream = kv.stream(workerId, dpRank);
  if (part === 0) {
    marks.delete(key);
    const order = stream ? compareEpochs(epoch, stream.epoch) : 1;
    if (order < 0 || (order === 0 && stream!.nextSeq >= nextSeq)) return;
    stream = kv.startEpoch(workerId, dpRank, epoch, nextSeq);
    marks.set(key, { epoch, nextSeq });
  } else {
    const mark = marks.get(key);
    if (
      !mark ||
      !stream ||
      compareEpochs(mark.epoch, stream.epoch) !== 0 ||
      mark.nextSeq !== stream.nextSeq
    ) {
      return;
    }
  }
  kv.apply(stream!, event.changes, nextSeq, 0);
}

/** Whether an unregistration of the worker newer than `key` ended the life `key` belongs to. */
function endedAfter(tracker: TrackerState, workerId: bigint, key: EventKey): boolean {
  const gone = tracker.records.gone.get(workerId);
  return gone !== undefined && compareKeys(gone, key) > 0;
}
