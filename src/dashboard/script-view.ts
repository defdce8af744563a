/**
 * The dashboard script's last part (see `script.ts`): the page, updated in place and keyed by
 * tracker and rank, the poll loop and the controls (token, filter, replica, pause).
 */
export const SCRIPT_VIEW = `
  function card(t) {
    var c = st.cards.get(t.key);
    if (c) return c;
    var root = el("section", "tracker");
    root.dataset.model = t.model;
    root.dataset.tenant = t.tenant;
    var head = el("header");
    var sums = el("div", "sums");
    c = { root: root, title: el("h2", "", t.model), tenant: el("span", "tenant", t.tenant), meta: el("span", "meta"),
      live: el("b"), decode: el("b"), prefill: el("b"), replicas: el("div", "replicas"), grid: el("div", "grid"), rows: new Map(),
      leases: el("div", "leases"), leasesSig: "", leaseClocks: [], catalog: el("div", "catalog"), catalogSig: "" };
    [["live ", c.live, ""], ["decode ", c.decode, "d"], ["prefill ", c.prefill, "p"]].forEach(function (s) {
      var span = el("span", s[2], s[0]);
      span.appendChild(s[1]);
      sums.appendChild(span);
    });
    head.append(c.title, c.tenant, c.meta, sums);
    [["Worker · rank", ""], ["Decode blocks", ""], ["Prefill tokens", ""], ["Live", "num"], ["Cached", "num"]].forEach(function (h) {
      c.grid.appendChild(el("div", "h " + h[1], h[0]));
    });
    c.leases.hidden = true;
    c.catalog.hidden = true;
    root.append(head, c.replicas, c.grid, c.leases, c.catalog);
    st.cards.set(t.key, c);
    return c;
  }

  function row(c, r) {
    var x = c.rows.get(r.id);
    if (x) return x;
    var root = el("div", "rank");
    root.style.display = "contents";
    root.dataset.worker = r.worker;
    root.dataset.rank = String(r.rank);
    var who = el("div", "who");
    var wid = el("span", "wid", r.worker);
    wid.title = "worker " + r.worker;
    who.append(wid, el("span", "rk", "rank " + r.rank));
    if (r.type === "prefill") who.appendChild(el("span", "badge", "prefill"));
    x = { root: root, decode: el("div", "bar decode"), prefill: el("div", "bar prefill"), live: el("div", "live"),
      cached: el("div", "cached"), dFill: el("div", "fill"), pFill: el("div", "fill"), dVal: el("span", "val"), pVal: el("span", "val") };
    x.decode.append(x.dFill, x.dVal);
    x.prefill.append(x.pFill, x.pVal);
    x.cached.title = "blocks the rank's engine holds, from its KV events (· without events)";
    root.append(who, x.decode, x.prefill, x.live, x.cached);
    c.rows.set(r.id, x);
    return x;
  }

  function replicaLine(c, t) {
    var s = st.peers.get(t.key);
    c.replicas.textContent = "";
    if (!s) {
      c.replicas.appendChild(el("span", "", st.peersDenied ? "replica status needs an admin token" : "replica status: waiting"));
      return;
    }
    c.replicas.appendChild(el("span", "", "served by replica " + s.replica + (s.peers.length ? " · peers:" : " · single replica")));
    s.peers.forEach(function (p) {
      var chip = el("span", "peer " + p.state);
      chip.append(el("span", "dot"), el("span", "", p.peer + " " + p.state.replace("_", " ") + " · " + fmt(p.queued_events) +
        " queued" + (p.oldest_unacked_age_ms ? " · lag " + (p.oldest_unacked_age_ms / 1000).toFixed(1) + " s" : "")));
      c.replicas.appendChild(chip);
    });
  }

  function render(trackers) {
    var main = $("trackers");
    var total = { workers: 0, ranks: 0, live: 0, decode: 0, prefill: 0, records: 0, schedulable: 0, leases: 0 };
    var nowMs = Date.now();
    var keep = new Set();
    trackers.forEach(function (t, i) {
      keep.add(t.key);
      var c = card(t);
      if (main.children[i] !== c.root) main.insertBefore(c.root, main.children[i] || null);
      var maxD = 0, maxP = 0, live = 0, dSum = 0, pSum = 0;
      t.ranks.forEach(function (r) {
        maxD = Math.max(maxD, r.decode); maxP = Math.max(maxP, r.prefill);
        dSum += r.decode; pSum += r.prefill; live += r.requests || 0;
      });
      setText(c.meta, (t.blockSize ? "block " + t.blockSize : "no block size yet") + " · " + t.workers.size + " worker" + (t.workers.size === 1 ? "" : "s") +
        " · " + t.ranks.length + " rank" + (t.ranks.length === 1 ? "" : "s"));
      setText(c.live, fmt(live)); setText(c.decode, fmt(dSum)); setText(c.prefill, fmt(pSum));
      var seen = new Set();
      t.ranks.forEach(function (r, j) {
        seen.add(r.id);
        var x = row(c, r);
        // Five header cells come first; move a row only when out of place, so its bars keep animating.
        var at = c.grid.children[5 + j];
        if (at !== x.root) c.grid.insertBefore(x.root, at || null);
        if (x.root.dataset.decode !== String(r.decode) && x.root.dataset.decode !== undefined) flash(x.dVal);
        if (x.root.dataset.prefill !== String(r.prefill) && x.root.dataset.prefill !== undefined) flash(x.pVal);
        x.root.dataset.decode = String(r.decode);
        x.root.dataset.prefill = String(r.prefill);
        x.root.dataset.requests = r.requests === null ? "" : String(r.requests);
        x.dFill.style.width = (maxD ? (100 * r.decode) / maxD : 0) + "%";
        x.pFill.style.width = (maxP ? (100 * r.prefill) / maxP : 0) + "%";
        setText(x.dVal, fmt(r.decode));
        setText(x.pVal, fmt(r.prefill));
        setText(x.live, r.requests === null ? "·" : fmt(r.requests));
        var kv = st.kv.get(t.key);
        var cachedBlocks = kv && kv.has(r.id) ? kv.get(r.id) : null;
        x.root.dataset.cached = cachedBlocks === null ? "" : String(cachedBlocks);
        setText(x.cached, cachedBlocks === null ? "·" : fmt(cachedBlocks));
      });
      c.rows.forEach(function (x, id) { if (!seen.has(id)) { x.root.remove(); c.rows.delete(id); } });
      replicaLine(c, t);
      leaseLines(c, t, nowMs);
      catalogLine(c, t);
      total.leases += liveLeases(t, nowMs);
      total.records += t.catalog.length; total.schedulable += schedulable(t);
      total.workers += t.workers.size; total.ranks += t.ranks.length; total.live += live; total.decode += dSum; total.prefill += pSum;
    });
    st.cards.forEach(function (c, k) { if (!keep.has(k)) { c.root.remove(); st.cards.delete(k); } });
    $("empty").hidden = trackers.length > 0;
    setText($("t-trackers"), fmt(trackers.length));
    setText($("t-workers"), fmt(total.workers));
    setText($("t-ranks"), fmt(total.ranks));
    setText($("t-live"), fmt(total.live));
    setText($("t-decode"), fmt(total.decode));
    setText($("t-prefill"), fmt(total.prefill));
    setText($("t-catalog"), fmt(total.schedulable) + " / " + fmt(total.records));
    setText($("t-leases"), fmt(total.leases));
    var sel = $("replica");
    st.replicas.forEach(function (name) {
      if (!Array.from(sel.options).some(function (o) { return o.value === name; })) sel.appendChild(new Option(name, name));
    });
  }

  async function tick() {
    st.timer = 0;
    if (st.paused || document.hidden) return schedule();
    try {
      var r = await Promise.all([api("GET", "/workers"), api("GET", "/loads"), api("GET", "/selection/workers")]);
      var denied = r.find(function (x) { return x.status === 401; });
      if (denied) {
        notice("This service requires an API token: enter one above. It is kept in this tab only (sessionStorage). (" +
          (denied.data && denied.data.error) + ")", "error");
        setStatus("error", "token required");
        $("token").focus();
        return schedule();
      }
      if (!r[0].ok) throw failure(r[0], "/workers");
      if (!r[1].ok) throw failure(r[1], "/loads");
      // The catalog is the selection API's view: without it the rest of the page still stands.
      var warnings = r[2].ok ? [] : [failure(r[2], "/selection/workers").message + ": the catalog is not shown."];
      var trackers = build(r[0].data, r[1].data, r[2].ok ? r[2].data : null);
      await details(trackers);
      render(trackers);
      if (trackers.length > MAX_DETAILED) warnings.push("Live requests, replica status and leases are shown for the first " +
        MAX_DETAILED + " trackers; narrow with the filter.");
      notice(warnings.join(" "));
      st.tick += 1;
      $("updated").dataset.tick = String(st.tick);
      setStatus("live", "live · updated " + new Date().toLocaleTimeString());
    } catch (e) {
      setStatus("error", String(e && e.message || e));
    }
    schedule();
  }
  function schedule() { if (!st.timer) st.timer = setTimeout(tick, POLL_MS); }
  function now() { clearTimeout(st.timer); st.timer = 0; tick(); }

  $("token-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var v = $("token").value.trim();
    if (v) sessionStorage.setItem(TOKEN_KEY, v);
    $("token").value = "";
    st.peersDenied = false;
    showToken(); notice(""); now();
  });
  $("token-clear").addEventListener("click", function () {
    sessionStorage.removeItem(TOKEN_KEY); st.peersDenied = false; showToken(); now();
  });
  $("pause").addEventListener("click", function () {
    st.paused = !st.paused;
    setText($("pause"), st.paused ? "Resume" : "Pause");
    if (st.paused) setStatus("paused", "paused"); else now();
  });
  $("filter").addEventListener("input", now);
  var sel = $("replica");
  var saved = sessionStorage.getItem(REPLICA_KEY) || "";
  if (saved) { sel.appendChild(new Option(saved, saved)); st.replicas.add(saved); }
  sel.value = saved;
  sel.addEventListener("change", function () {
    if (sel.value) sessionStorage.setItem(REPLICA_KEY, sel.value); else sessionStorage.removeItem(REPLICA_KEY);
    st.peers.clear(); st.leases.clear(); st.kv.clear(); st.tick = 0; now();
  });
  document.addEventListener("visibilitychange", function () { if (!document.hidden) now(); });
  showToken();
  tick();
`;
