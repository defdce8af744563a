/**
 * The dashboard script's first part (see `script.ts`): state, exact JSON, the API calls and the
 * model built from `/workers`, `/loads` and the selection catalog (`/selection/workers`), plus live
 * requests, replica status, frontend leases and each rank's cached blocks (`/kv_events`) per tracker.
 */
export const SCRIPT_DATA = String.raw`
  "use strict";
  var TOKEN_KEY = "slot-tracker-token";
  var REPLICA_KEY = "slot-tracker-replica";
  var POLL_MS = 1000;
  var PEERS_EVERY = 5;
  var LEASES_EVERY = 2;
  var MAX_DETAILED = 32;
  var st = { paused: false, tick: 0, timer: 0, peersDenied: false, peers: new Map(), replicas: new Set(), leases: new Map(), kv: new Map(), cards: new Map() };
  var $ = function (id) { return document.getElementById(id); };
  var fmt = function (n) { return Number(n).toLocaleString("en-US"); };

  // JSON.parse rounds integers above 2^53; worker ids are u64, so keep such literals as exact strings.
  var SOURCE_TEXT = (function () {
    var ok = false;
    try { JSON.parse("1", function (k, v, ctx) { ok = !!(ctx && ctx.source === "1"); return v; }); } catch (e) {}
    return ok;
  })();
  function parseExact(text) {
    if (SOURCE_TEXT) {
      return JSON.parse(text, function (k, v, ctx) {
        if (typeof v === "number" && !Number.isSafeInteger(v) && ctx && /^-?\d+$/.test(ctx.source)) return ctx.source;
        return v;
      });
    }
    return JSON.parse(text.replace(/([\[:,]\s*)(-?\d{16,})(?=\s*[,\]}])/g, '$1"$2"'));
  }

  function token() { return sessionStorage.getItem(TOKEN_KEY) || ""; }
  function headers(json) {
    var h = { accept: "application/json" };
    if (json) h["content-type"] = "application/json";
    var t = token();
    if (t) h.authorization = "Bearer " + t;
    var r = sessionStorage.getItem(REPLICA_KEY);
    if (r) h["x-slot-tracker-replica"] = r;
    return h;
  }
  async function api(method, path, body) {
    var res = await fetch(path, { method: method, headers: headers(body !== undefined), body: body, cache: "no-store" });
    var text = await res.text();
    var data = null;
    try { data = text ? parseExact(text) : null; } catch (e) { data = { error: text.slice(0, 200) }; }
    return { status: res.status, ok: res.ok, data: data };
  }
  function failure(r, what) {
    return new Error(what + ": " + r.status + (r.data && r.data.error ? " " + r.data.error : ""));
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function setText(e, text) { if (e.textContent !== text) e.textContent = text; }
  function flash(e) { e.classList.remove("changed"); void e.offsetWidth; e.classList.add("changed"); }

  function setStatus(kind, text) {
    $("status").className = "status " + kind;
    setText($("status-text"), text);
  }
  function notice(text, kind) {
    var n = $("notice");
    n.hidden = !text;
    n.className = "notice " + (kind || "");
    setText(n, text || "");
  }
  function showToken() {
    var t = token();
    var s = $("token-state");
    s.className = "token-state" + (t ? " set" : "");
    setText(s, t ? "token in use" : "no token");
  }

  function keyOf(model, tenant) { return model + "\u0000" + tenant; }
  /** A listing row's tenant: PARTITION_FIELD names it tenant_id or routing_group. */
  function tenantOf(row) { return row.tenant_id !== undefined ? row.tenant_id : row.routing_group; }

  /**
   * Trackers from the listings: metadata from /workers, one row per rank from /loads, and each
   * catalog record of the selection API under its partition (model_name, routing_group), which is
   * the tracker of (model, tenant). A partition whose records all lack a block size or a DP range
   * has no slot-tracker worker yet, so the catalog alone makes its card.
   */
  function build(workers, loads, catalog) {
    var trackers = new Map();
    function tracker(model, tenant) {
      var k = keyOf(model, tenant);
      var t = trackers.get(k);
      if (!t) { t = { key: k, model: model, tenant: tenant, blockSize: 0, workers: new Map(), ranks: [], catalog: [] }; trackers.set(k, t); }
      return t;
    }
    workers.forEach(function (w) {
      var t = tracker(w.model_name, tenantOf(w));
      t.blockSize = w.block_size;
      t.workers.set(String(w.worker_id), w);
    });
    loads.forEach(function (l) {
      var t = tracker(l.model_name, tenantOf(l));
      var w = t.workers.get(String(l.worker_id));
      t.ranks.push({ id: String(l.worker_id) + "/" + l.dp_rank, worker: String(l.worker_id), rank: l.dp_rank,
        decode: l.active_decode_blocks, prefill: l.active_prefill_tokens, type: w && w.worker_type, requests: null });
    });
    (catalog || []).forEach(function (r) { tracker(r.model_name, r.routing_group).catalog.push(r); });
    var filter = $("filter").value.trim().toLowerCase();
    return Array.from(trackers.values())
      .filter(function (t) { return !filter || (t.model + " " + t.tenant).toLowerCase().indexOf(filter) >= 0; })
      .sort(function (a, b) { return a.model < b.model ? -1 : a.model > b.model ? 1 : a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0; });
  }

  /**
   * A tracker's live leases, kept in st.leases between asks. A failure, even of the fetch itself, is
   * kept as a short text for the card: the rest of the page stands without leases.
   */
  async function leasesOf(t) {
    var q = "?model_name=" + encodeURIComponent(t.model) + "&tenant_id=" + encodeURIComponent(t.tenant);
    try {
      var r = await api("GET", "/leases" + q);
      if (r.ok && Array.isArray(r.data)) st.leases.set(t.key, { rows: r.data, error: "" });
      else st.leases.set(t.key, { rows: [], error: r.ok ? "unexpected answer" : failure(r, "/leases").message });
    } catch (e) {
      st.leases.set(t.key, { rows: [], error: "/leases: " + String(e && e.message || e) });
    }
  }

  /**
   * A tracker's KV-event publishers (GET /kv_events), kept in st.kv between asks as each rank's
   * cached blocks by rank id. A failure leaves the ranks without a figure, the rest of the card stands.
   */
  async function kvOf(t) {
    var q = "?model_name=" + encodeURIComponent(t.model) + "&tenant_id=" + encodeURIComponent(t.tenant);
    try {
      var r = await api("GET", "/kv_events" + q);
      if (!r.ok || !Array.isArray(r.data)) return;
      var cached = new Map();
      r.data.forEach(function (x) { cached.set(String(x.worker_id) + "/" + x.dp_rank, x.cached_blocks); });
      st.kv.set(t.key, cached);
    } catch (e) {}
  }

  /**
   * Live requests per rank and, every few ticks, replica status and frontend leases (at once for a
   * tracker newly shown), for the first trackers shown.
   */
  async function details(trackers) {
    var shown = trackers.slice(0, MAX_DETAILED);
    var askPeers = st.tick % PEERS_EVERY === 0 && !st.peersDenied;
    var askLeases = st.tick % LEASES_EVERY === 0;
    var keys = new Set(shown.map(function (t) { return t.key; }));
    st.leases.forEach(function (l, k) { if (!keys.has(k)) st.leases.delete(k); });
    st.kv.forEach(function (l, k) { if (!keys.has(k)) st.kv.delete(k); });
    var leases = shown.filter(function (t) { return askLeases || !st.leases.has(t.key); }).map(leasesOf);
    leases = leases.concat(shown.filter(function (t) { return askLeases || !st.kv.has(t.key); }).map(kvOf));
    await Promise.all(leases.concat(shown.map(async function (t) {
      // A partition known only to the catalog has no ranks to ask about.
      if (t.ranks.length > 0) {
        var body = JSON.stringify({ model_name: t.model, tenant_id: t.tenant, sequence_hashes: [] });
        var r = await api("POST", "/potential_loads", body);
        if (r.ok) {
          var live = new Map();
          r.data.forEach(function (p) { live.set(String(p.worker_id) + "/" + p.dp_rank, p.active_requests); });
          t.ranks.forEach(function (rank) { rank.requests = live.has(rank.id) ? live.get(rank.id) : null; });
        }
      }
      if (askPeers) {
        var q = "?model_name=" + encodeURIComponent(t.model) + "&tenant_id=" + encodeURIComponent(t.tenant);
        var p = await api("GET", "/replica_sync/peers" + q);
        if (p.status === 401 || p.status === 403) st.peersDenied = true;
        else if (p.ok) {
          st.peers.set(t.key, p.data);
          st.replicas.add(p.data.replica);
          p.data.peers.forEach(function (x) { st.replicas.add(x.peer); });
        }
      }
    })));
  }
`;
