/**
 * Hostile input over HTTP, in workerd: fast-check sequences that interleave valid operations (tracked
 * by a plain model) with hostile requests: valid bodies broken by one mutation, random bytes and JSON,
 * stray paths and methods, odd query strings. Every hostile request must get a 4xx with an `error`
 * string (never a 5xx, never a hang), every valid one the model's status, and at the end the tracker
 * must hold exactly what the valid operations alone produce: workers, loads and leases. Leases
 * (`POST`/`DELETE /leases`) and the `owner` of bookings are among the operations and the fields
 * broken, so a refused lease call or owned booking must change nothing either.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { opArb } from "./fuzz-arbitraries";
import { FuzzModel } from "./fuzz-model";
import { applyOp, expectModelState, RUNS, TIMEOUT_MS } from "./fuzz-harness";

describe("hostile input", () => {
  it(
    "answers every hostile request with a 4xx error and keeps exactly the valid operations' state",
    async () => {
      // No request the model books may expire before the test ends: the model knows no expiry.
      expect(Number(env.REQUEST_EXPIRY_SECONDS) * 1000).toBeGreaterThan(TIMEOUT_MS);
      let runs = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 40 }), async (ops) => {
          runs++;
          const model = new FuzzModel(`fuzz-${crypto.randomUUID()}`);
          for (const op of ops) await applyOp(model, op);
          await expectModelState(model);
        }),
        { numRuns: RUNS },
      );
      expect(runs).toBeGreaterThanOrEqual(RUNS);
    },
    TIMEOUT_MS,
  );
});
