/**
 * `POST /selection/reservations` (201: a pending selection's replay, or the explicit form with
 * `worker_id`) and the lifecycle of one reservation by its id: `POST …/{id}/prefill_complete`,
 * `POST …/{id}/output_block` and `DELETE …/{id}`, each 200 `{"status":"ok"}` or 404 "reservation
 * {id} not found". A reservation is a live request of its partition's tracker, so `/free` ends it
 * too; the id-only routes find that tracker as `reservation-owner.ts` says. Reference selection §1.6.
 */
import { Hono } from "hono";
import type { Result } from "../../../durable-objects/types";
import type { AppEnv } from "../../env";
import { HttpError, unwrap } from "../../http/errors";
import { forgetOwner, onOwner, rememberOwner } from "../../http/reservation-owner";
import { bookingPartition } from "../../schema/selection/leases";
import type { TrackerStub } from "../../http/stubs";
import { trackerFor } from "../../http/stubs";
import { outputBlockBody, reservationBody } from "../../schema/selection/booking";
import { reservationToWire } from "../../schema/selection/booking-wire";
import { promptOf } from "../../schema/selection/serde-prompt";
import { validBody, validOptionalBody } from "../../schema/validate";
import { send, sendOk } from "../../wire/respond";

const DECAY_FRACTION_RANGE = "decay_fraction must be between 0.0 and 1.0";

/** Runs a lifecycle call on the reservation's tracker; 404 when no tracker the caller may see holds it. */
async function lifecycle(
  c: Parameters<typeof onOwner>[0],
  id: string,
  call: (stub: TrackerStub) => Promise<Result>,
): Promise<void> {
  const found = await onOwner(c, id, call, (answer) => !answer.ok && answer.code === "request_not_found");
  if (found.missing) throw new HttpError(404, `reservation ${id} not found`);
  unwrap(found.answer);
}

export const reservations = new Hono<AppEnv>()
  .post("/reservations", validBody(reservationBody), async (c) => {
    const body = c.req.valid("json");
    const id = body.selection_id;
    const explicit =
      body.worker_id === undefined
        ? undefined
        : {
            workerId: body.worker_id,
            dpRank: body.dp_rank ?? 0,
            prompt: promptOf(body, true),
            ...(body.effective_prefill_tokens !== undefined && {
              effectivePrefillTokens: body.effective_prefill_tokens,
            }),
            ...(body.track_prefill_tokens !== undefined && { trackPrefillTokens: body.track_prefill_tokens }),
            ...(body.router_config_override !== undefined && { override: body.router_config_override }),
            ...(body.expected_output_tokens !== undefined && {
              expectedOutputTokens: body.expected_output_tokens,
            }),
          };
    const stub = trackerFor(c, bookingPartition(body));
    const outcome = unwrap(
      await stub.reserve({
        selectionId: id,
        ...(explicit && { explicit }),
        ...(body.owner !== undefined && { owner: body.owner }),
      }),
    );
    rememberOwner(id, { model: body.model_name, tenant: body.routing_group });
    return send(c, reservationToWire(outcome, body.model_name, body.routing_group), 201);
  })
  .post("/reservations/:reservation_id/prefill_complete", async (c) => {
    const id = c.req.param("reservation_id");
    await lifecycle(c, id, (stub) => stub.reservationPrefillComplete(id));
    return sendOk(c, 200);
  })
  .post("/reservations/:reservation_id/output_block", validOptionalBody(outputBlockBody), async (c) => {
    const id = c.req.param("reservation_id");
    const fraction = c.req.valid("json").decay_fraction;
    if (fraction !== undefined && !(fraction >= 0 && fraction <= 1))
      throw new HttpError(400, DECAY_FRACTION_RANGE);
    await lifecycle(c, id, (stub) => stub.reservationOutputBlock(id, fraction));
    return sendOk(c, 200);
  })
  .delete("/reservations/:reservation_id", async (c) => {
    const id = c.req.param("reservation_id");
    await lifecycle(c, id, (stub) => stub.endReservation(id));
    forgetOwner(id);
    return sendOk(c, 200);
  });
