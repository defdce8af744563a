/**
 * The dashboard script's catalog part (see `script.ts`): under each tracker, the selection API's
 * worker catalog of that partition, one line per record from `GET /selection/workers`: its
 * lifecycle, endpoint and DP ranks, and for an `incomplete` record why it cannot be scheduled.
 * Everything shown goes through `textContent`, and a lifecycle becomes a class name only if it is
 * one of the four Dynamo defines.
 */
export const SCRIPT_CATALOG = `
  var LIFECYCLES = ["incomplete", "schedulable", "draining", "unschedulable"];

  /** The ranks a record is scheduled on: Dynamo reads a missing start as 0 and a missing size as 1. */
  function dpRanks(r) {
    var start = r.data_parallel_start_rank === null || r.data_parallel_start_rank === undefined ? 0 : r.data_parallel_start_rank;
    var size = r.data_parallel_size === null || r.data_parallel_size === undefined ? 1 : r.data_parallel_size;
    if (size === 0) return "no ranks";
    return size === 1 ? "rank " + start : "ranks " + start + "–" + (start + size - 1);
  }
  function schedulable(t) { return t.catalog.filter(function (r) { return r.lifecycle === "schedulable"; }).length; }

  function catalogLine(c, t) {
    // Redrawn only when a record changed: the listing is the same on most polls.
    var sig = JSON.stringify(t.catalog);
    if (c.catalogSig === sig) return;
    c.catalogSig = sig;
    c.catalog.textContent = "";
    c.catalog.hidden = t.catalog.length === 0;
    if (t.catalog.length === 0) return;
    c.catalog.appendChild(el("div", "h", "Catalog · " + schedulable(t) + " of " + t.catalog.length + " schedulable"));
    t.catalog.forEach(function (r) {
      var known = LIFECYCLES.indexOf(r.lifecycle) >= 0;
      var line = el("div", "cw " + (known ? r.lifecycle : "unknown"));
      line.dataset.worker = String(r.worker_id);
      line.dataset.lifecycle = String(r.lifecycle);
      var wid = el("span", "wid", String(r.worker_id));
      wid.title = "worker " + r.worker_id;
      var endpoint = el("span", "ep", r.endpoint ? r.endpoint : "no endpoint");
      line.append(wid, el("span", "lc", String(r.lifecycle)), endpoint, el("span", "dp", dpRanks(r)));
      var reasons = r.not_schedulable_reasons || [];
      if (reasons.length > 0) line.appendChild(el("span", "why", reasons.join("; ")));
      c.catalog.appendChild(line);
    });
  }
`;
