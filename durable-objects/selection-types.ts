/**
 * Payloads and results of the tracker object's selection-API methods (reference selection §1), beside
 * `types.ts` and under its rules: 64-bit values as `bigint`, hash lists as one `BigUint64Array`,
 * token lists as one `Uint32Array`, every change backward- and forward-compatible.
 */
import type { PromptInput } from "./core/hashing/prompt-hashes";
import type { OverlapSummary } from "./core/routing/dynamo-overlap";
import type { RouterConfigOverride } from "./core/routing/router-config-override";

/**
 * A prompt as a selection request gives it, checked by the Worker (reference selection §1.2):
 * tokens the object hashes, or trusted hashes taken as they are.
 */
export type SelectionPrompt =
  | {
      kind: "tokens";
      /** `token_ids` (u32 each), `mm_routing_info`, `block_mm_infos`, `lora_name`, `cache_salt`, `is_eagle`. */
      tokens: PromptInput;
    }
  | {
      kind: "hashes";
      /**
       * `block_hashes` (i64 bit-cast to u64): the public local block hashes, for the cache index.
       * Required by the selecting routes; a reservation may leave them out (it is then not recorded).
       */
      blockHashes?: BigUint64Array;
      /** `sequence_hashes` (i64 bit-cast to u64): the tracking hashes, booked as they are. */
      sequenceHashes: BigUint64Array;
      /** `isl_tokens`: tokens of the prompt, > 0. */
      islTokens: number;
    };

/** A (worker, rank) as requests name one (`pinned_worker`). */
export interface WorkerRank {
  workerId: bigint;
  dpRank: number;
}

/** The choice a selection request asks for, beyond its prompt and partition. */
export interface SelectionConstraints {
  /** `router_config_override`, validated (its texts are the Worker's to answer). */
  override?: RouterConfigOverride;
  /** `pinned_worker`: scored alone, without a draw. */
  pinned?: WorkerRank;
  /** `allowed_worker_ids`: only these workers are eligible. */
  allowedWorkerIds?: readonly bigint[];
  /** `routing_constraints.required_taints`: an eligible worker has every one. */
  requiredTaints?: readonly string[];
  /** `routing_constraints.preferred_taints`: taint → weight (f32). */
  preferredTaints?: Readonly<Record<string, number>>;
  /** Seeds this call's draws; the Worker passes it only when `ALLOW_TEST_SEED` is "1". */
  seed?: number;
}

/** `POST /select` and `POST /select_and_reserve`. */
export interface SelectInput extends SelectionConstraints {
  /**
   * `query` (`/select`), `advisory` (`/select` with `advisory: true`: adds the worker's load) or
   * `book` (`/select_and_reserve`: chooses and books in one step).
   */
  mode: "query" | "advisory" | "book";
  /** `/select`: caches the choice under it for `/reservations`; booking: the booking's id (required). */
  selectionId?: string;
  prompt: SelectionPrompt;
  /** Stored with the booking (u32). */
  expectedOutputTokens?: number;
  /** Booking only: the frontend whose lease owns the booking (SPEC §8, `AddInput.owner`). */
  owner?: string;
}

/** The normalized booking facts a booking answers with (Dynamo PR #12335). */
export interface BookingFacts {
  /** The tracking hashes booked (u64; the wire writes them as i64). */
  sequenceHashes: BigUint64Array;
  islTokens: number;
  trackPrefillTokens: boolean;
}

/** What a select answers: `SelectResponse`'s fields, in its order. */
export interface SelectOutcome {
  selectionId?: string;
  /** Bookings only. */
  booking?: BookingFacts;
  workerId: bigint;
  dpRank: number;
  endpoint: string;
  blockSize: number;
  /** Matched tokens over the chosen worker's DP range. */
  overlap: OverlapSummary;
  /** Tokens the chosen rank would still prefill: `isl − min(cached, isl)`. */
  effectivePrefillTokens: number;
  /** Blocks the chosen rank would hold with the request admitted, untracked tail included. */
  potentialDecodeBlocks: number;
  /** Advisory selections only. */
  workerLoad?: WorkerLoad;
}

/** `SelectResponse.worker_load`, advisory only. */
export interface WorkerLoad {
  /** Tokens of the chosen rank's bookings still in prefill. */
  activePrefillTokens: number;
  /** Tokens one engine step of the worker may batch (`max_num_batched_tokens`; 0 when not given). */
  prefillTokenCapacity: bigint;
  totalKvBlocks?: bigint;
}

/** `POST /reservations`: a cached replay (no `explicit`) or the explicit form. */
export interface ReservationInput {
  selectionId: string;
  explicit?: ExplicitReservation;
  /** The frontend whose lease owns the booking (SPEC §8, `AddInput.owner`), either form. */
  owner?: string;
}

export interface ExplicitReservation {
  workerId: bigint;
  /** Default 0. */
  dpRank: number;
  prompt: SelectionPrompt;
  /** Tokens to book as prefill load (≤ the prompt's tokens, checked by the object). */
  effectivePrefillTokens?: number;
  trackPrefillTokens?: boolean;
  override?: SelectionConstraints["override"];
  expectedOutputTokens?: number;
}

/** `ReservationResponse`. */
export interface ReservationOutcome {
  selectionId: string;
  workerId: bigint;
  dpRank: number;
  endpoint: string;
}

/** `/potential_loads` and `/overlap_scores` of the selection API: a prompt, no booking. */
export interface PromptQuery {
  prompt: SelectionPrompt;
  override?: SelectionConstraints["override"];
}

/** `PotentialLoad` of the selection API (also `/loads`' rows). */
export interface SelectionLoad {
  workerId: bigint;
  dpRank: number;
  /** Tokens: active prefill, plus this prompt's effective prefill when prefill is tracked. */
  potentialPrefillTokens: number;
  /** Blocks: active blocks plus the prompt's tracking hashes beyond the rank's live prefix. */
  potentialDecodeBlocks: number;
  activeRequests: number;
}

/** One `/overlap_scores` row: blocks by tier, Dynamo's cumulative and per-tier forms. */
export interface OverlapRow {
  workerId: bigint;
  dpRank: number;
  deviceBlocks: number;
  /** Device plus host-pinned. */
  hostPinnedBlocks: number;
  /** Device, host-pinned, disk and external. */
  diskBlocks: number;
  hostPinnedExtensionBlocks: number;
  diskExtensionBlocks: number;
  /** The credit the cost gives these blocks (no decay): credit × device + host and disk weights × theirs. */
  routerCreditBlocks: number;
}

export interface OverlapScores {
  blockSize: number;
  /** The prompt's complete blocks. */
  numBlocks: number;
  workers: OverlapRow[];
}
