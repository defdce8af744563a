/**
 * Setup of the projects with property tests: every `fc.assert` runs from one fixed seed (see
 * `vitest.config.ts`), so a run draws the same cases on every machine and a failure replays.
 */
import fc from "fast-check";

declare const __FC_SEED__: number;

fc.configureGlobal({ seed: __FC_SEED__ });
