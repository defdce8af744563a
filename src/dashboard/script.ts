/**
 * The dashboard's browser script, shipped inline with the page. Plain ES2020 in a raw string (the
 * Worker has no DOM types and no build step of its own): it must contain no backtick and no dollar
 * brace. It polls `/workers`, `/loads` and the selection catalog (`/selection/workers`) every second,
 * asks each shown tracker for its live requests (`/potential_loads` with an empty prompt) and, every
 * fifth tick, for its replica status, every second tick for its frontend leases (`/leases`), and
 * updates the page in place, keyed by tracker and rank, so bars animate instead of redrawing. It is
 * written in four parts that share one function scope.
 */
import { SCRIPT_CATALOG } from "./script-catalog";
import { SCRIPT_DATA } from "./script-data";
import { SCRIPT_LEASES } from "./script-leases";
import { SCRIPT_VIEW } from "./script-view";

export const DASHBOARD_SCRIPT = `(function () {${SCRIPT_DATA}${SCRIPT_CATALOG}${SCRIPT_LEASES}${SCRIPT_VIEW}})();\n`;
