/**
 * The rows `GET /workers` and `GET /loads` answer, as the API tests expect them, and the 64-bit worker
 * ids that show whether an id was kept exact (2^64 − 1) or rounded on the way (2^53 + 1).
 */

export const U64_MAX = 18446744073709551615n;
export const ABOVE_2_53 = 9007199254740993n;

export interface WorkerRow {
  worker_id: bigint | number;
  model_name: string;
  tenant_id: string;
  block_size: number;
  dp_start: number;
  dp_size: number;
}

export interface LoadRow {
  model_name: string;
  tenant_id: string;
  worker_id: bigint | number;
  dp_rank: number;
  active_prefill_tokens: number;
  active_decode_blocks: number;
}

/** One rank's `/loads` row; an idle rank by default. */
export function load(
  model: string,
  tenant: string,
  workerId: bigint | number,
  dpRank: number,
  prefill = 0,
  blocks = 0,
): LoadRow {
  return {
    model_name: model,
    tenant_id: tenant,
    worker_id: workerId,
    dp_rank: dpRank,
    active_prefill_tokens: prefill,
    active_decode_blocks: blocks,
  };
}
