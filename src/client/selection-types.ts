/**
 * The selection service's request and answer types under Dynamo's names (reference selection §1.2,
 * §1.3). Requests are the wire form of the schemas the routes validate with; answers are what the
 * routes' own types say they send. Three fields of the prompt bodies are written out by hand: their
 * schemas parse into other shapes (tokens into a `Uint32Array`, the override into the object's
 * camelCase settings), which the inferred wire type of hono/client reproduces instead of the JSON.
 */
import type { InferResponseType } from "hono/client";
import type {
  outputBlockBody,
  promptQueryBody,
  reservationBody,
  selectAndReserveBody,
  selectBody,
} from "../schema/selection/booking";
import type { workerPatchBody, workerRequestBody } from "../schema/selection/catalog";
import type { replicaPeerBody } from "../schema/selection/replica-peers";
import type { WireInput } from "../wire/wire-types";
import type { SlotTrackerClient } from "./slot-tracker";

/** `router_config_override` (`RouterConfigOverrideSerde`): each field replaces the config's for one call. */
export interface RouterConfigOverride {
  /** Credit per cached block of overlap, ≥ 0. */
  overlap_score_credit?: number;
  /** Weight of prefill load in the cost, ≥ 0. */
  prefill_load_scale?: number;
  /** 0 picks the cheapest rank; above 0 samples ranks by cost. */
  router_temperature?: number;
  assume_kv_reuse?: boolean;
  track_prefill_tokens?: boolean;
  /** Weight of shared-cache hits, in [0, 1]. */
  shared_cache_multiplier?: number;
  /** Deprecated: mapped onto credit and scale as Dynamo maps it. */
  overlap_score_weight?: number;
}

type BlockMmInfos = WireInput<typeof selectBody>["block_mm_infos"];

/** The prompt fields whose wire form is written out here (see the module comment). */
interface PromptWire {
  /** The prompt's tokens (u32 each), hashed by the service. */
  token_ids?: number[];
  /** Multimodal routing tokens; they win over `token_ids` when non-empty. */
  mm_routing_info?: { routing_token_ids: number[]; block_mm_infos?: BlockMmInfos };
  router_config_override?: RouterConfigOverride;
}

type WithPrompt<S> = Omit<WireInput<S>, keyof PromptWire> & PromptWire;

export type SelectRequest = WithPrompt<typeof selectBody>;
export type SelectAndReserveRequest = WithPrompt<typeof selectAndReserveBody>;
/** The replay of a pending selection, or with `worker_id` (and `dp_rank`) the explicit form. */
export type ReservationRequest = WithPrompt<typeof reservationBody>;
export type PotentialLoadsRequest = WithPrompt<typeof promptQueryBody>;
export type OverlapScoresRequest = PotentialLoadsRequest;
export type OutputBlockRequest = WireInput<typeof outputBlockBody>;
export type WorkerRequest = WireInput<typeof workerRequestBody>;
export type WorkerPatchRequest = WireInput<typeof workerPatchBody>;
export type ReplicaPeerRequest = WireInput<typeof replicaPeerBody>;

/** `GET /workers` and `GET /loads`: each filter optional; an empty one matches nothing. */
export interface PartitionQuery {
  model_name?: string;
  routing_group?: string;
}

type Api = SlotTrackerClient["selection"];

export type SelectResponse = InferResponseType<Api["select"]["$post"], 200>;
export type ReservationResponse = InferResponseType<Api["reservations"]["$post"], 201>;
export type WorkerCatalogRecord = InferResponseType<Api["workers"]["$post"], 201>;
export type ReadyResponse = InferResponseType<Api["ready"]["$get"]>;
export type ModelLoadResponse = InferResponseType<Api["loads"]["$get"], 200>[number];
export type PotentialLoad = InferResponseType<Api["potential_loads"]["$post"], 200>[number];
export type DumpResponse = InferResponseType<Api["dump"]["$get"], 200>;

type InferredScores = InferResponseType<Api["overlap_scores"]["$post"], 200>;
/** `shared_cache.ranges` is always empty here (no shared cache), so the route's type is `never[]`. */
export type OverlapScoresResponse = Omit<InferredScores, "shared_cache"> & {
  shared_cache: Omit<InferredScores["shared_cache"], "ranges"> & { ranges: [number, number][] };
};
