/** The selection API's booking routes, for the OpenAPI document (reference selection §1; SPEC §7). */
import {
  outputBlockBody,
  promptQueryBody,
  reservationBody,
  selectAndReserveBody,
  selectBody,
} from "../schema/selection/booking";
import {
  dumpAnswer,
  overlapScoresAnswer,
  reservationAnswer,
  selectAnswer,
  selectionLoadsAnswer,
  selectionPotentialLoadsAnswer,
} from "../schema/selection/booking-answers";
import { workerListQuery } from "../schema/selection/catalog";
import { type Operation, ok, REPLICA_HEADER } from "./api-operation";

const PROMPT_ERRORS = {
  400: "The prompt lacks what it needs without `token_ids`: `block_hashes is required without token_ids`, `sequence_hashes is required without token_ids`, `isl_tokens is required without token_ids`, `isl_tokens must be greater than 0`, `block_hashes length {a} must match sequence_hashes length {b}`.",
  503: "`no schedulable workers for model={m} routing_group={g}`.",
};
const RESERVATION_ID = { reservation_id: "The reservation's `selection_id`." };
const SEED = {
  "x-slot-tracker-seed":
    'Seeds the draws (tie-breaks, softmax); accepted only where `ALLOW_TEST_SEED` is "1".',
};
/** A booking with an `owner` (SPEC §8; not Dynamo's). */
const OWNED = {
  404: '`no live lease for model={m} routing_group={g} owner "{owner}"` (an `owner` without a live lease; nothing changes).',
  429: "an `owner` holds its maximum of live bookings (`MAX_BOOKINGS_PER_OWNER`).",
};
const MISSING = { 404: "`reservation {id} not found` (not live in the serving replica)." };

export const SELECTION_BOOKING_OPERATIONS: readonly Operation[] = [
  {
    method: "post",
    path: "/selection/select",
    tag: "Selection",
    summary: "Choose a rank for a prompt",
    description:
      "Dynamo's cost over the partition's schedulable ranks, with the cache credit; books nothing. With a `selection_id`, the choice stays pending (120 s, 4,096 per tracker and replica) for `/selection/reservations`.",
    access: "tenant",
    body: selectBody,
    headers: { ...REPLICA_HEADER, ...SEED },
    success: { status: 200, description: "The choice.", schema: selectAnswer },
    errors: PROMPT_ERRORS,
  },
  {
    method: "post",
    path: "/selection/select_and_reserve",
    tag: "Selection",
    summary: "Choose and book in one step",
    description:
      "Chooses as `/selection/select` and books the choice under `selection_id` (default: a UUID v4) in the same step of the tracker object; the booking is a live request of the slot-tracker API too.",
    access: "tenant",
    body: selectAndReserveBody,
    headers: { ...REPLICA_HEADER, ...SEED },
    success: { status: 200, description: "The choice and its booking facts.", schema: selectAnswer },
    errors: {
      ...PROMPT_ERRORS,
      404: OWNED[404],
      409: "`selection {id} is already reserved or being reserved`.",
      413: "The prompt has more than 65,536 blocks.",
      429: `The tracker holds its maximum of live requests or blocks; ${OWNED[429]}`,
    },
  },
  {
    method: "post",
    path: "/selection/reservations",
    tag: "Selection",
    summary: "Book a pending selection, or an explicit rank",
    description:
      "Without `worker_id`: replays the pending selection of `selection_id` once (a failure keeps it for a retry). With `worker_id`: books (`worker_id`, `dp_rank` or 0) and discards any pending selection of the id.",
    access: "tenant",
    body: reservationBody,
    headers: REPLICA_HEADER,
    success: { status: 201, description: "Booked.", schema: reservationAnswer },
    errors: {
      400: `${PROMPT_ERRORS[400]} \`effective_prefill_tokens (E) must not exceed isl_tokens (I)\`.`,
      404: `\`no pending selection {id} for {key} (expired, already used, or never selected)\`; \`schedulable worker {w} (dp_rank {r}) not found for {key}\`; \`schedulable worker {w} not found for {key}\`; ${OWNED[404]}`,
      409: "`selection {id} is already reserved or being reserved`.",
      429: OWNED[429],
      503: PROMPT_ERRORS[503],
    },
  },
  {
    method: "post",
    path: "/selection/reservations/:reservation_id/prefill_complete",
    tag: "Selection",
    summary: "A reservation's prefill is done",
    description: "Clears its prefill tokens; a repeat is a success. Needs no body.",
    access: "tenant",
    pathParams: RESERVATION_ID,
    headers: REPLICA_HEADER,
    success: ok(200, "Done."),
    errors: MISSING,
  },
  {
    method: "post",
    path: "/selection/reservations/:reservation_id/output_block",
    tag: "Selection",
    summary: "One more output block",
    description:
      "Adds one decode block (weighing `decay_fraction`, default 1) to the reservation's rank, on the serving replica only, as in Dynamo; a rank counts the weights rounded to whole blocks. The body is optional.",
    access: "tenant",
    pathParams: RESERVATION_ID,
    body: outputBlockBody,
    headers: REPLICA_HEADER,
    success: ok(200, "Added."),
    errors: { ...MISSING, 400: "`decay_fraction must be between 0.0 and 1.0`." },
  },
  {
    method: "delete",
    path: "/selection/reservations/:reservation_id",
    tag: "Selection",
    summary: "End a reservation",
    description: "Frees the booking, as the slot-tracker API's `/free` does.",
    access: "tenant",
    pathParams: RESERVATION_ID,
    headers: REPLICA_HEADER,
    success: ok(200, "Freed."),
    errors: MISSING,
  },
  {
    method: "get",
    path: "/selection/loads",
    tag: "Selection",
    summary: "Each partition's loads",
    description:
      "One entry per partition with schedulable workers, sorted by model and routing group; its ranks' active prefill tokens, active blocks and live requests.",
    access: "tenant",
    query: workerListQuery,
    headers: REPLICA_HEADER,
    success: { status: 200, description: "The loads.", schema: selectionLoadsAnswer },
    errors: {},
  },
  {
    method: "post",
    path: "/selection/potential_loads",
    tag: "Selection",
    summary: "Each rank's load with this prompt",
    description:
      "`potential_prefill_tokens = active + isl − min(cached, isl)` when prefill is tracked (active alone when not); `potential_decode_blocks = active + the prompt's blocks beyond the rank's live prefix`.",
    access: "tenant",
    body: promptQueryBody,
    headers: REPLICA_HEADER,
    success: { status: 200, description: "Per rank.", schema: selectionPotentialLoadsAnswer },
    errors: PROMPT_ERRORS,
  },
  {
    method: "post",
    path: "/selection/overlap_scores",
    tag: "Selection",
    summary: "Each rank's cached blocks of this prompt",
    description:
      "Per schedulable rank: blocks by tier (device only from the approximate index) and the credit the cost gives them.",
    access: "tenant",
    body: promptQueryBody,
    headers: REPLICA_HEADER,
    success: { status: 200, description: "Per rank.", schema: overlapScoresAnswer },
    errors: PROMPT_ERRORS,
  },
  {
    method: "get",
    path: "/selection/dump",
    tag: "Selection",
    summary: "The cache index, for recovery",
    description:
      "Every partition's cache index in the serving replica as Dynamo's RouterEvent Stored events, the form Dynamo's selectors and indexers recover from.",
    access: "admin",
    headers: REPLICA_HEADER,
    success: { status: 200, description: "Per partition.", schema: dumpAnswer },
    errors: {},
  },
];
