/** `POST /route`: choose a worker for a new request and book it, in one call to the tracker object. */
import { Hono } from "hono";
import type { RouteChoice } from "../../durable-objects/types";
import type { AppEnv } from "../env";
import { unwrap } from "../http/errors";
import { trackerFor } from "../http/stubs";
import { seedOf } from "../http/test-seed";
import { routeBody } from "../schema/requests";
import { validBody } from "../schema/validate";
import { send } from "../wire/respond";

/** Set when the answer rests on a resolution the caller should know about (conflicting cards). */
const WARNING_HEADER = "x-slot-tracker-warning";

export const route = new Hono<AppEnv>().post("/route", validBody(routeBody), async (c) => {
  const body = c.req.valid("json");
  const override = body.router_config_override;
  const result = await trackerFor(c, body).route({
    requestId: body.request_id,
    hashes: body.sequence_hashes,
    newIslTokens: body.new_isl_tokens,
    ...(body.expected_output_tokens !== undefined && { expectedOutputTokens: body.expected_output_tokens }),
    ...(body.session_id !== undefined && { sessionId: body.session_id }),
    ...(body.owner !== undefined && { owner: body.owner }),
    ...(override?.overlap_score_weight !== undefined && {
      overlapScoreWeight: override.overlap_score_weight,
    }),
    ...(override?.router_temperature !== undefined && { routerTemperature: override.router_temperature }),
    ...seedOf(c),
  });
  const outcome = unwrap(result);
  const { decode, prefill } = outcome;
  const headers: Record<string, string> =
    outcome.warnings.length > 0 ? { [WARNING_HEADER]: outcome.warnings.join("; ") } : {};
  return send(
    c,
    {
      worker_id: decode.workerId,
      dp_rank: decode.dpRank,
      prefill: prefill && { ...choiceJson(prefill), request_id: prefill.requestId },
      cost: choiceJson(decode).cost,
      mode: decode.mode,
    },
    201,
    headers,
  );
});

function choiceJson(choice: RouteChoice) {
  return {
    worker_id: choice.workerId,
    dp_rank: choice.dpRank,
    mode: choice.mode,
    cost: {
      logit: choice.cost.logit,
      potential_prefill_tokens: choice.cost.potentialPrefillTokens,
      potential_decode_blocks: choice.cost.potentialDecodeBlocks,
      overlap_blocks: choice.cost.overlapBlocks,
      cached_blocks: choice.cost.cachedBlocks,
    },
  };
}
