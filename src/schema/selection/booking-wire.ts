/**
 * The selection API's booking answers as the wire carries them (reference selection §1.3): fields
 * in Rust's declaration order, an absent `Option` left out (Dynamo's `SelectResponse` skips them:
 * the booking facts appear only on bookings), 64-bit values exact, and `sequence_hashes` as the i64
 * two's complement of the tracking hashes.
 */
import type { RouterEvent } from "../../../durable-objects/core/cache-index/cache-index";
import type {
  OverlapScores,
  ReservationOutcome,
  SelectionLoad,
  SelectOutcome,
} from "../../../durable-objects/selection-types";

/** The same 64 bits read as i64: one bigint each, where `BigInt.asIntN` of each u64 made two. */
function i64s(hashes: BigUint64Array): bigint[] {
  return Array.from(new BigInt64Array(hashes.buffer, hashes.byteOffset, hashes.length));
}

export function selectToWire(outcome: SelectOutcome, model: string, routingGroup: string) {
  const { booking, overlap, workerLoad } = outcome;
  return {
    selection_id: outcome.selectionId,
    sequence_hashes: booking && i64s(booking.sequenceHashes),
    isl_tokens: booking?.islTokens,
    track_prefill_tokens: booking?.trackPrefillTokens,
    model_name: model,
    routing_group: routingGroup,
    worker_id: outcome.workerId,
    dp_rank: outcome.dpRank,
    endpoint: outcome.endpoint,
    block_size: outcome.blockSize,
    overlap: {
      longest_matched: overlap.longestMatched,
      gpu: overlap.gpu,
      dp: overlap.dp,
      cpu: overlap.cpu,
      disk: overlap.disk,
    },
    effective_prefill_tokens: outcome.effectivePrefillTokens,
    potential_decode_blocks: outcome.potentialDecodeBlocks,
    worker_load: workerLoad && {
      active_prefill_tokens: workerLoad.activePrefillTokens,
      prefill_token_capacity: workerLoad.prefillTokenCapacity,
      total_kv_blocks: workerLoad.totalKvBlocks,
    },
  };
}

export function reservationToWire(outcome: ReservationOutcome, model: string, routingGroup: string) {
  return {
    selection_id: outcome.selectionId,
    model_name: model,
    routing_group: routingGroup,
    worker_id: outcome.workerId,
    dp_rank: outcome.dpRank,
    endpoint: outcome.endpoint,
  };
}

export function loadToWire(load: SelectionLoad) {
  return {
    worker_id: load.workerId,
    dp_rank: load.dpRank,
    potential_prefill_tokens: load.potentialPrefillTokens,
    potential_decode_blocks: load.potentialDecodeBlocks,
    active_requests: load.activeRequests,
  };
}

/** `ModelLoadResponse`: one partition's loads; nothing is ever queued, so the pending figures are 0. */
export function modelLoadToWire(model: string, routingGroup: string, loads: SelectionLoad[]) {
  return {
    model_name: model,
    routing_group: routingGroup,
    loads: loads.map(loadToWire),
    pending_count: 0,
    pending_isl_tokens: 0,
  };
}

/** `OverlapScoresResponse`; the HTTP service has no shared cache, so it reports none. */
export function overlapScoresToWire(scores: OverlapScores) {
  return {
    block_size: scores.blockSize,
    num_blocks: scores.numBlocks,
    workers: scores.workers.map((row) => ({
      worker_id: row.workerId,
      dp_rank: row.dpRank,
      device_blocks: row.deviceBlocks,
      host_pinned_blocks: row.hostPinnedBlocks,
      disk_blocks: row.diskBlocks,
      host_pinned_extension_blocks: row.hostPinnedExtensionBlocks,
      disk_extension_blocks: row.diskExtensionBlocks,
      router_credit_blocks: row.routerCreditBlocks,
    })),
    shared_cache: { enabled: false, total_hit_blocks: 0, ranges: [] },
  };
}

/** One partition of `/dump`: its block size and its index as Dynamo's `RouterEvent`s. */
export function partitionDumpToWire(blockSize: number, events: RouterEvent[]) {
  return {
    block_size: blockSize,
    events: events.map((e) => ({
      worker_id: e.worker_id,
      storage_tier: e.storage_tier,
      event: {
        event_id: e.event.event_id,
        data: {
          stored: {
            parent_hash: e.event.data.stored.parent_hash,
            start_position: e.event.data.stored.start_position,
            blocks: e.event.data.stored.blocks.map((b) => ({
              block_hash: b.block_hash,
              tokens_hash: b.tokens_hash,
            })),
          },
        },
        dp_rank: e.event.dp_rank,
      },
    })),
  };
}
