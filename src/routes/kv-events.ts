/**
 * `POST /kv_events` (SPEC §9), mounted at the root and under `/selection`: one (worker, rank)'s
 * engine KV-event batches, the body byte for byte as the engine published it on ZMQ. The Worker
 * decodes and hashes (`wire/kv-events/`); the tracker object checks the sequence and applies.
 *
 * `GET /kv_events` lists the tracker's publishers (epoch, next sequence number, blocks held, lag).
 *
 * Answers: 200 `{applied, ignored, next_seq}` (batches applied, repeats acknowledged, the sequence
 * number expected next); 409 `{error, expected_seq}` for a batch past the next expected one, which
 * changes nothing; 400/413/422 for a body that cannot be applied, naming the problem; 415 for a
 * body that is not MessagePack. The caller needs a token granted for the tracker's tenant (or an
 * admin one), as every route about one tracker.
 */
import { Hono } from "hono";
import { MAX_KV_BODY_BYTES, MAX_KV_EPOCH_BYTES } from "../../durable-objects/limits";
import type { AppEnv } from "../env";
import { HttpError, unwrap } from "../http/errors";
import { trackerFor } from "../http/stubs";
import { kvEventsQuery, trackerQuery } from "../schema/requests";
import { validQuery } from "../schema/validate";
import { formatOf, readBytes } from "../wire/body";
import { decodeKvEventBody } from "../wire/kv-events";
import { send } from "../wire/respond";

const SEQ_HEADER = "x-kv-event-seq";
const EPOCH_HEADER = "x-kv-event-epoch";
const utf8 = new TextEncoder();

export const kvEvents = new Hono<AppEnv>()
  .post("/kv_events", validQuery(kvEventsQuery), async (c) => {
    const query = c.req.valid("query");
    // The tenant is checked first: a caller it does not cover learns nothing more of the call.
    const tracker = trackerFor(c, query);
    const seq = seqOf(c.req.header(SEQ_HEADER));
    const epoch = epochOf(c.req.header(EPOCH_HEADER));
    if (formatOf(c.req.header("content-type")) !== "msgpack") {
      throw new HttpError(
        415,
        "KV events are MessagePack as the engines publish them: send application/msgpack",
      );
    }
    const body = await readBytes(c.req.raw, MAX_KV_BODY_BYTES);
    const decoded = decodeKvEventBody(body, { dpRank: query.dp_rank ?? null });
    if (!decoded.ok) throw new HttpError(decoded.status, decoded.error);
    const { batches } = decoded;
    const dpRank = query.dp_rank ?? batches.find((batch) => batch.dpRank !== null)?.dpRank ?? 0;
    const result = await tracker.kvEvents({ workerId: query.worker_id, dpRank, seq, epoch, batches });
    if (!result.ok && result.code === "sequence_gap" && "expectedSeq" in result) {
      return send(c, { error: result.message, expected_seq: result.expectedSeq }, 409);
    }
    const ack = unwrap(result);
    return send(c, { applied: ack.applied, ignored: ack.ignored, next_seq: ack.nextSeq }, 200);
  })
  .get("/kv_events", validQuery(trackerQuery), async (c) => {
    const streams = await trackerFor(c, c.req.valid("query")).kvStreams();
    return send(
      c,
      streams.map((s) => ({
        worker_id: s.workerId,
        dp_rank: s.dpRank,
        epoch: s.epoch,
        next_seq: s.nextSeq,
        cached_blocks: s.cachedBlocks,
        ...(s.lagMs !== null && { lag_ms: s.lagMs }),
      })),
      200,
    );
  });

/** The publisher's sequence number of the body's first batch: a non-negative integer up to 2^53 − 1. */
function seqOf(raw: string | undefined): number {
  if (raw === undefined) {
    throw new HttpError(
      400,
      `header \`${SEQ_HEADER}\` is required: the publisher's sequence number of the first batch`,
    );
  }
  const seq = /^\s*[0-9]{1,16}\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(seq)) {
    throw new HttpError(
      400,
      `header \`${SEQ_HEADER}\`: expected a non-negative integer up to ${Number.MAX_SAFE_INTEGER}`,
    );
  }
  return seq;
}

/** The sender's name for the publisher's life: text of 1 to {@link MAX_KV_EPOCH_BYTES} bytes. */
function epochOf(raw: string | undefined): string {
  if (raw === undefined) {
    throw new HttpError(
      400,
      `header \`${EPOCH_HEADER}\` is required: the sender's name for the publisher's life`,
    );
  }
  const bytes = utf8.encode(raw).length;
  if (bytes === 0 || bytes > MAX_KV_EPOCH_BYTES) {
    throw new HttpError(
      400,
      `header \`${EPOCH_HEADER}\`: expected 1 to ${MAX_KV_EPOCH_BYTES} bytes, got ${bytes}`,
    );
  }
  return raw;
}
