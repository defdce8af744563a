/**
 * `POST /selection/select` (choose; with a `selection_id`, leave the choice pending for
 * `/reservations`) and `POST /selection/select_and_reserve` (choose and book in one step of the
 * tracker object; 200, not 201, as in Dynamo). Reference selection §1.5.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { unwrap } from "../../http/errors";
import { rememberOwner } from "../../http/reservation-owner";
import { bookingPartition } from "../../schema/selection/leases";
import { trackerFor } from "../../http/stubs";
import { seedOf } from "../../http/test-seed";
import { constraintsOf, selectAndReserveBody, selectBody } from "../../schema/selection/booking";
import { selectToWire } from "../../schema/selection/booking-wire";
import { promptOf } from "../../schema/selection/serde-prompt";
import { validBody } from "../../schema/validate";
import { send } from "../../wire/respond";

export const select = new Hono<AppEnv>()
  .post("/select", validBody(selectBody), async (c) => {
    const body = c.req.valid("json");
    const prompt = promptOf(body);
    const outcome = await trackerFor(c, {
      model_name: body.model_name,
      tenant_id: body.routing_group,
    }).select({
      mode: body.advisory ? "advisory" : "query",
      ...(body.selection_id !== undefined && { selectionId: body.selection_id }),
      prompt,
      ...(body.expected_output_tokens !== undefined && { expectedOutputTokens: body.expected_output_tokens }),
      ...constraintsOf(body),
      ...seedOf(c),
    });
    return send(c, selectToWire(unwrap(outcome), body.model_name, body.routing_group), 200);
  })
  .post("/select_and_reserve", validBody(selectAndReserveBody), async (c) => {
    const body = c.req.valid("json");
    const prompt = promptOf(body);
    const selectionId = body.selection_id ?? crypto.randomUUID();
    const partition = { model: body.model_name, tenant: body.routing_group };
    const outcome = await trackerFor(c, bookingPartition(body)).select({
      mode: "book",
      selectionId,
      prompt,
      ...(body.owner !== undefined && { owner: body.owner }),
      ...(body.expected_output_tokens !== undefined && { expectedOutputTokens: body.expected_output_tokens }),
      ...constraintsOf(body),
      ...seedOf(c),
    });
    const booked = unwrap(outcome);
    rememberOwner(selectionId, partition);
    return send(c, selectToWire(booked, body.model_name, body.routing_group), 200);
  });
