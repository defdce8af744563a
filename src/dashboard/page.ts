/**
 * The dashboard page: one self-contained HTML document (stylesheet and script inline, no external
 * asset), so it works on a closed network and under a strict Content-Security-Policy.
 */
import { DASHBOARD_SCRIPT } from "./script";
import { DASHBOARD_CSS } from "./style";

const TILES: readonly [id: string, label: string, kind: string][] = [
  ["t-trackers", "Models · tenants", ""],
  ["t-workers", "Workers", ""],
  ["t-ranks", "Ranks", ""],
  ["t-live", "Live requests", ""],
  ["t-decode", "Decode blocks", "decode"],
  ["t-prefill", "Prefill tokens", "prefill"],
  ["t-catalog", "Schedulable", "catalog"],
  ["t-leases", "Live leases", "leases"],
];

export const DASHBOARD_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Edge Slot Tracker · live</title><style>${DASHBOARD_CSS}</style></head>
<body>
<div class="top">
  <div class="brand">Edge Slot Tracker<span>live dashboard</span></div>
  <div class="status" id="status"><span class="dot"></span><span id="status-text">connecting…</span></div>
  <div class="controls">
    <label>Replica <select id="replica" title="The replica whose view is shown"><option value="">nearest</option></select></label>
    <input id="filter" type="search" placeholder="Filter model or tenant" aria-label="Filter model or tenant">
    <form id="token-form">
      <input id="token" type="password" autocomplete="off" placeholder="API token" aria-label="API token">
      <button class="primary" type="submit">Use token</button>
      <button id="token-clear" type="button">Clear</button>
      <span id="token-state" class="token-state"></span>
    </form>
    <button id="pause" type="button">Pause</button>
    <a href="/docs">API docs</a>
  </div>
</div>
<section class="totals">${TILES.map(
  ([id, label, kind]) =>
    `<div class="tile ${kind}"><div class="k">${label}</div><div class="v" id="${id}">–</div></div>`,
).join("")}</section>
<div id="notice" class="notice" hidden></div>
<main id="trackers"></main>
<div id="empty" class="empty" hidden>No workers registered yet. Register one with <code>POST /register</code> or <code>POST /selection/workers</code> (see the <a href="/docs">API docs</a>).</div>
<footer id="updated" data-tick="0">Every rank of every worker, per model and tenant: decode blocks (distinct KV blocks of its live
requests) and prefill tokens still to prefill, bars relative to the busiest rank of the tracker. Polls <code>/workers</code>,
<code>/loads</code> and the selection catalog <code>/selection/workers</code> (each worker's lifecycle, endpoint and DP ranks) every
second, live requests, replica status and frontend leases (<code>/leases</code>: each owner, its live bookings and
its deadline) per tracker. Selection bookings are live requests like any other.</footer>
<script>${DASHBOARD_SCRIPT}</script>
</body></html>`;
