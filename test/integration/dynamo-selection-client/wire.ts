/**
 * The selection service's JSON as Dynamo's HTTP clients write and read it, ported field by field:
 *
 * - `deploy/inference-gateway/ext-proc/src/selection_backend.rs` (the EPP's wire types:
 *   `WorkerRegistration`, `SelectRequest`, `SelectResponse`, `OverlapSummary`);
 * - `deploy/inference-gateway/ext-proc/src/selector_client.rs` (`SelectorFleet`: `ReadyResponse`,
 *   `CatalogRecordWire`, `record_matches`);
 * - `docs/components/router/standalone-selection.md` ("Ray Select-Then-Reserve Flow": the cached
 *   replay and explicit `POST /reservations` bodies, the reservation lifecycle) with the
 *   `ReservationResponse` and booking-facts fields of the service's `types.rs`.
 *
 * Request types list their fields in the Rust declaration order, `undefined` standing for a `None`
 * that `skip_serializing_if = "Option::is_none"` leaves out. Ids are `bigint`: `u64` end to end.
 */
import {
  bool,
  type Decoder,
  i64,
  option,
  string,
  struct,
  u32,
  u32StringMap,
  u64,
  usize,
  vec,
  withDefault,
} from "./serde";

/** `WorkerRegistration` (`POST /workers`); `kv_events_endpoints` is a `HashMap<u32, String>`. */
export interface WorkerRegistration {
  worker_id: bigint;
  model_name: string;
  endpoint: string;
  block_size: number;
  data_parallel_size: number;
  kv_events_endpoints: Record<string, string>;
  replay_endpoint?: string;
  total_kv_blocks?: bigint;
  max_num_batched_tokens?: bigint;
  stable_routing_id?: string;
}

/** `SelectRequest` (`POST /select`, and `POST /select_and_reserve` in the newer fleet). */
export interface SelectRequest {
  model_name: string;
  selection_id?: string;
  token_ids: number[];
  /** A `HashSet<u64>`: serialized as a JSON array. */
  allowed_worker_ids?: bigint[];
  priority_jump?: number;
  strict_priority?: number;
}

/**
 * The prompt as the Ray flow's `POST /select` sends it (the doc's example carries the partition):
 * `token_ids`, or precomputed `block_hashes` + `sequence_hashes` + `isl_tokens`.
 */
export interface PromptSelectRequest {
  selection_id?: string;
  model_name: string;
  routing_group: string;
  token_ids?: number[];
  block_hashes?: bigint[];
  sequence_hashes?: bigint[];
  isl_tokens?: bigint;
}

export interface OverlapSummary {
  longest_matched: bigint;
  gpu: bigint;
  cpu: bigint;
  disk: bigint;
}

const zero = () => 0n;

export const overlapSummary: Decoder<OverlapSummary> = struct<OverlapSummary>({
  longest_matched: withDefault(u32, zero),
  gpu: withDefault(u32, zero),
  cpu: withDefault(u32, zero),
  disk: withDefault(u32, zero),
});

export interface SelectResponse {
  selection_id: string | undefined;
  worker_id: bigint;
  dp_rank: bigint;
  endpoint: string;
  block_size: bigint;
  overlap: OverlapSummary;
  effective_prefill_tokens: bigint;
}

/** The EPP's `SelectResponse`: `#[serde(default)]` on the selection id, overlap and effective prefill. */
export const selectResponse: Decoder<SelectResponse> = struct<SelectResponse>({
  selection_id: option(string),
  worker_id: u64,
  dp_rank: u32,
  endpoint: string,
  block_size: u32,
  overlap: withDefault(overlapSummary, () => ({ longest_matched: 0n, gpu: 0n, cpu: 0n, disk: 0n })),
  effective_prefill_tokens: withDefault(usize, zero),
});

/**
 * The booking facts `/select_and_reserve` adds for peer replay (Dynamo PR #12335): what a caller
 * broadcasts so that another replica can book the same request with the explicit form.
 */
export interface BookingFacts {
  selection_id: string;
  sequence_hashes: bigint[];
  isl_tokens: bigint;
  track_prefill_tokens: boolean;
}

export const bookingFacts: Decoder<BookingFacts> = struct<BookingFacts>({
  selection_id: string,
  sequence_hashes: vec(i64),
  isl_tokens: usize,
  track_prefill_tokens: bool,
});

export interface ReadyResponse {
  ready: boolean;
}

export const readyResponse: Decoder<ReadyResponse> = struct<ReadyResponse>({
  ready: withDefault(bool, () => false),
});

/** The subset of a catalog record the fleet compares against its desired registration. */
export interface CatalogRecordWire {
  worker_id: bigint;
  model_name: string;
  endpoint: string | undefined;
  kv_events_endpoints: Map<bigint, string>;
  replay_endpoint: string | undefined;
  block_size: bigint | undefined;
  data_parallel_size: bigint | undefined;
  max_num_batched_tokens: bigint | undefined;
  total_kv_blocks: bigint | undefined;
  stable_routing_id: string | undefined;
}

export const catalogRecordWire: Decoder<CatalogRecordWire> = struct<CatalogRecordWire>({
  worker_id: u64,
  model_name: withDefault(string, () => ""),
  endpoint: option(string),
  kv_events_endpoints: withDefault(u32StringMap, () => new Map()),
  replay_endpoint: option(string),
  block_size: option(u32),
  data_parallel_size: option(u32),
  max_num_batched_tokens: option(u64),
  total_kv_blocks: option(u64),
  stable_routing_id: option(string),
});

/** `record_matches`: whether a replica's record already holds every field router-only mode owns. */
export function recordMatches(desired: WorkerRegistration, actual: CatalogRecordWire): boolean {
  const kv = Object.entries(desired.kv_events_endpoints);
  return (
    actual.model_name === desired.model_name &&
    actual.endpoint === desired.endpoint &&
    actual.block_size === BigInt(desired.block_size) &&
    actual.data_parallel_size === BigInt(desired.data_parallel_size) &&
    actual.kv_events_endpoints.size === kv.length &&
    kv.every(([rank, url]) => actual.kv_events_endpoints.get(BigInt(rank)) === url) &&
    actual.replay_endpoint === desired.replay_endpoint &&
    actual.total_kv_blocks === desired.total_kv_blocks &&
    actual.max_num_batched_tokens === desired.max_num_batched_tokens &&
    actual.stable_routing_id === desired.stable_routing_id
  );
}

/** The cached replay form of `POST /reservations`: the id and partition, nothing else. */
export interface ReplayReservation {
  selection_id: string;
  model_name: string;
  routing_group: string;
}

/** The explicit form: worker identity and prompt, as a peer replays a booking. */
export interface ExplicitReservation extends ReplayReservation {
  worker_id: bigint;
  dp_rank: bigint;
  sequence_hashes: bigint[];
  isl_tokens: bigint;
  effective_prefill_tokens?: bigint;
  track_prefill_tokens?: boolean;
}

export interface ReservationResponse {
  selection_id: string;
  model_name: string;
  routing_group: string;
  worker_id: bigint;
  dp_rank: bigint;
  endpoint: string;
}

export const reservationResponse: Decoder<ReservationResponse> = struct<ReservationResponse>({
  selection_id: string,
  model_name: string,
  routing_group: string,
  worker_id: u64,
  dp_rank: u32,
  endpoint: string,
});

/** `{"status":"ok"}`, the lifecycle routes' answer. */
export const statusOk: Decoder<{ status: string }> = struct<{ status: string }>({ status: string });

/** `PotentialLoad`, one row of `GET /loads` (an inspection route: no ported client reads it). */
export interface PotentialLoad {
  worker_id: bigint;
  dp_rank: bigint;
  potential_prefill_tokens: bigint;
  potential_decode_blocks: bigint;
  active_requests: bigint;
}

export interface ModelLoadResponse {
  model_name: string;
  routing_group: string;
  loads: PotentialLoad[];
  pending_count: bigint;
  pending_isl_tokens: bigint;
}

export const modelLoadResponse: Decoder<ModelLoadResponse> = struct<ModelLoadResponse>({
  model_name: string,
  routing_group: string,
  loads: vec(
    struct<PotentialLoad>({
      worker_id: u64,
      dp_rank: u32,
      potential_prefill_tokens: usize,
      potential_decode_blocks: usize,
      active_requests: usize,
    }),
  ),
  pending_count: usize,
  pending_isl_tokens: usize,
});
