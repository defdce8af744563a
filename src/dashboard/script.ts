/**
 * The dashboard's browser script, shipped inline with the page. Plain ES2020 in a raw string (the
 * Worker has no DOM types and no build step of its own): it must contain no backtick and no dollar
 * brace. It polls `/workers` and `/loads` every second, asks each shown tracker for its live requests
 * (`/potential_loads` with an empty prompt) and, every fifth tick, for its replica status, and updates
 * the page in place, keyed by tracker and rank, so bars animate instead of redrawing. It is written
 * in two halves that share one function scope.
 */
import { SCRIPT_DATA } from "./script-data";
import { SCRIPT_VIEW } from "./script-view";

export const DASHBOARD_SCRIPT = `(function () {${SCRIPT_DATA}${SCRIPT_VIEW}})();\n`;
