/**
 * The catalog's client-facing texts, Dynamo's to the letter where Dynamo has one (clients match on
 * them). A partition prints as `model={m} routing_group={g}`: Dynamo's `RoutingPartitionId` Display
 * is not in the stored sources (reference §7.1), and this is the form its standalone indexer writes
 * by hand for the same partition, the closest a Dynamo client can have seen.
 */

export function partitionText(model: string, tenant: string): string {
  return `model=${model} routing_group=${tenant}`;
}

/** The `not_schedulable_reasons`, in the order Dynamo checks them. */
export const reasonText = {
  endpoint: () => "endpoint is required",
  blockSize: () => "block_size must be greater than 0",
  dpSize: () => "data_parallel_size must be greater than 0",
  maxNumBatchedTokens: () => "max_num_batched_tokens is required while queueing is enabled",
  kvEventsEndpoint: (rank: number) => `kv_events endpoint is required for dp_rank ${rank}`,
  replayEndpoint: () => "replay_endpoint is supported only for data_parallel_size 1",
  reconciliation: (error: string) => `reconciliation failed: ${error}`,
};

export const catalogText = {
  blockSizeMismatch: (model: string, tenant: string, existing: number, requested: number) =>
    `block_size mismatch for ${partitionText(model, tenant)}: existing=${existing} requested=${requested}`,
  isEagleMismatch: (model: string, tenant: string, existing: boolean, requested: boolean) =>
    `is_eagle mismatch for ${partitionText(model, tenant)}: existing=${existing} requested=${requested}`,
  /** PATCH or DELETE of an id the catalog does not hold. */
  workerNotFound: (workerId: bigint) => `worker ${workerId} not found`,
  noSchedulableWorkers: () => "no schedulable workers are available",
  noSchedulableWorkersFor: (model: string, tenant: string) =>
    `no schedulable workers for ${partitionText(model, tenant)}`,
  recordTooLarge: (limit: number, bytes: number) =>
    `worker record too large: its text fields take ${bytes} UTF-8 bytes, at most ${limit} allowed`,
};
