/**
 * One batch as the tracker takes it. Engines send `[ts, events, data_parallel_rank]` (vLLM from
 * #18925 on, SGLang, TRT-LLM), `[ts, events]` before it; a map `{ts, events, data_parallel_rank}` is
 * taken too (one vLLM snapshot declares the batch without `array_like`, engine-kv-events §5), with
 * Dynamo's alias `dp_rank`. Elements past the third and unknown keys are ignored, as new fields are.
 */
import { MAX_KV_BLOCKS_PER_CALL, MAX_KV_EVENTS_PER_CALL } from "../../../durable-objects/limits";
import type { KvEventBatch, KvOp } from "../../../durable-objects/kv-event-types";
import { eventFields } from "./fields";
import { GroupKinds } from "./groups";
import { type EventContext, eventOp } from "./ops";
import { KvProblem, malformed, type Place } from "./problem";
import { isMap, isNil, u32 } from "./values";

const I32_MAX = 0x7fffffff;

/** What one call has read so far: its counts and caps, and what its events taught about groups. */
export class CallState {
  events = 0;
  blocks = 0;
  skipped = 0;
  readonly groups = new GroupKinds();

  constructor(readonly callRank: number | null) {}

  countEvents(n: number): void {
    this.events += n;
    if (this.events > MAX_KV_EVENTS_PER_CALL) {
      throw new KvProblem(413, `more than ${MAX_KV_EVENTS_PER_CALL} KV events in one call`);
    }
  }

  spend(n: number): void {
    this.blocks += n;
    if (this.blocks > MAX_KV_BLOCKS_PER_CALL) {
      throw new KvProblem(413, `more than ${MAX_KV_BLOCKS_PER_CALL} KV blocks in one call`);
    }
  }
}

export function readBatch(value: unknown, index: number, call: CallState): KvEventBatch {
  const place: Place = { batch: index, event: -1 };
  let ts: unknown;
  let events: unknown;
  let rank: unknown;
  if (Array.isArray(value)) {
    if (value.length < 2) throw malformed(place, "a batch array must be [ts, events, data_parallel_rank?]");
    [ts, events, rank] = value;
  } else if (isMap(value)) {
    ts = value.ts;
    events = value.events;
    rank = isNil(value.data_parallel_rank) ? value.dp_rank : value.data_parallel_rank;
  } else {
    throw malformed(place, "a batch must be an array or a map");
  }
  const at = atOf(ts, place);
  if (!Array.isArray(events)) throw malformed(place, "events must be an array");
  const dpRank = isNil(rank) ? null : u32(rank);
  if (dpRank === undefined || (dpRank !== null && dpRank > I32_MAX)) {
    throw malformed(place, "data_parallel_rank must be a non-negative 32-bit integer or nil");
  }
  call.countEvents(events.length);
  const context: EventContext = {
    place,
    rank: dpRank ?? call.callRank,
    groups: call.groups,
    spend: (n) => call.spend(n),
  };
  const ops: KvOp[] = [];
  for (let j = 0; j < events.length; j++) {
    place.event = j;
    const fields = eventFields(events[j]);
    if (typeof fields === "string") throw malformed(place, fields);
    const op = eventOp(fields, context);
    if (op === null) call.skipped++;
    else ops.push(op);
  }
  return { at, dpRank, ops };
}

/** `ts`, float seconds since the epoch, as epoch ms; 0 when the batch has none. */
function atOf(ts: unknown, place: Place): number {
  if (isNil(ts)) return 0;
  const seconds = typeof ts === "bigint" ? Number(ts) : ts;
  if (typeof seconds !== "number" || !Number.isFinite(seconds)) throw malformed(place, "ts must be a number");
  return Math.round(seconds * 1000);
}
