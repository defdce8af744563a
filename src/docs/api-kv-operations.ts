/**
 * The engine KV-event routes (SPEC §9), at the root and under `/selection`, for the OpenAPI
 * document: the query schemas their middleware runs and the answers they send.
 */
import {
  MAX_KV_BLOCKS_PER_CALL,
  MAX_KV_BODY_BYTES,
  MAX_KV_EPOCH_BYTES,
  MAX_KV_EVENTS_PER_CALL,
} from "../../durable-objects/limits";
import { kvEventsQuery, trackerQuery } from "../schema/requests";
import { kvEventsAnswer, kvStreamsAnswer } from "../schema/responses";
import { type Operation, REPLICA_HEADER } from "./api-operation";

const POST_KV = `One (worker, rank)'s engine KV-event batches, byte for byte as vLLM, SGLang or TensorRT-LLM publish them on ZMQ (several concatenated MessagePack batches allowed; the relay in \`relay/\` posts them). Batch \`i\` of the body is sequence number \`x-kv-event-seq + i\`. In the current epoch, numbers already applied are acknowledged and ignored; a number past the next expected one refuses the whole call with 409 and changes nothing. A new \`x-kv-event-epoch\` (the engine restarted) clears what the rank held and starts its sequence anywhere. Stored blocks are hashed from their \`token_ids\` into Dynamo's public local block hashes and chained by their parents; from then on \`/selection/*\` and \`/route\` take this worker's overlap from its events.`;
const LIST_KV =
  "The tracker's KV-event publishers in the serving replica, one row per (worker, rank), with their epoch, the sequence number expected next, the blocks each rank holds and the lag of its last batch.";

const HEADERS = {
  "x-kv-event-seq": "The publisher's sequence number of the body's first batch (a non-negative integer).",
  "x-kv-event-epoch": `The sender's name for the publisher's life, 1..${MAX_KV_EPOCH_BYTES} bytes; a new one starts a new epoch.`,
};

const RAW_BODY = {
  mediaType: "application/msgpack",
  description: `Engine KV-event batches \`[ts, events, data_parallel_rank]\` (or the map form), events as tagged arrays or maps with \`type\`; at most ${MAX_KV_BODY_BYTES} bytes, ${MAX_KV_EVENTS_PER_CALL} events and ${MAX_KV_BLOCKS_PER_CALL} blocks.`,
};

const ERRORS = {
  400: "A missing or malformed header, a malformed body (bytes or shapes; the error names batch, event and field), a block size other than the tracker's, or a batch of another data-parallel rank.",
  404: "No such tracker, or no such (worker, rank): `Worker WorkerWithDpRank { … } not found`.",
  409: 'Out of sequence: `{"error": …, "expected_seq": n}`; nothing changed, send again from `n`.',
  413: `Body over ${MAX_KV_BODY_BYTES} bytes, or over ${MAX_KV_EVENTS_PER_CALL} events or ${MAX_KV_BLOCKS_PER_CALL} blocks.`,
  415: "A body that is not MessagePack.",
  422: "Well-formed events that contradict themselves (token count against block hashes), or a bad query field.",
};

function operations(prefix: "" | "/selection"): Operation[] {
  const api = prefix === "" ? "" : " (selection API)";
  return [
    {
      method: "post",
      path: `${prefix}/kv_events`,
      tag: prefix === "" ? "Routing" : "Selection",
      summary: `Apply an engine's KV-event batches${api}`,
      description: POST_KV,
      access: "tenant",
      query: kvEventsQuery,
      requiredHeaders: HEADERS,
      headers: REPLICA_HEADER,
      rawBody: RAW_BODY,
      success: {
        status: 200,
        description: "Applied, or acknowledged as repeats.",
        schema: kvEventsAnswer,
        example: { applied: 1, ignored: 0, next_seq: 42 },
      },
      errors: ERRORS,
    },
    {
      method: "get",
      path: `${prefix}/kv_events`,
      tag: prefix === "" ? "Routing" : "Selection",
      summary: `List a tracker's KV-event publishers${api}`,
      description: LIST_KV,
      access: "tenant",
      query: trackerQuery,
      headers: REPLICA_HEADER,
      success: { status: 200, description: "The publishers.", schema: kvStreamsAnswer },
      errors: {},
    },
  ];
}

export const KV_OPERATIONS: readonly Operation[] = [...operations(""), ...operations("/selection")];
