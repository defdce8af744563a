/**
 * The dashboard script's leases part (see `script.ts`): under each tracker, its frontends' live
 * leases from `GET /leases`, one line per owner with its live booking count and its deadline as time
 * left. The listing is asked for every few ticks (`details()`), so the lines are redrawn only when
 * it changed; the countdown is recomputed on every poll against this browser's clock, and a lease
 * whose deadline has passed here reads "lapsed" until the next listing drops it. Owners are any text
 * a frontend chose: everything shown goes through `textContent` and `dataset`.
 */
export const SCRIPT_LEASES = `
  /** Time left, as people read it: seconds under a minute, then minutes and seconds. */
  function timeLeft(ms) {
    var s = Math.ceil(ms / 1000);
    if (s < 60) return s + " s";
    var m = Math.floor(s / 60);
    if (m < 60) return m + " min " + String(s % 60).padStart(2, "0") + " s";
    return Math.floor(m / 60) + " h " + String(m % 60).padStart(2, "0") + " min";
  }
  function deadline(ms) {
    var d = new Date(Number(ms));
    return isNaN(d.getTime()) ? "unknown deadline" : "until " + d.toLocaleString() + " (" + d.toISOString() + ")";
  }
  /** The tracker's leases the page counts as live: listed at the last ask, with time left here. */
  function liveLeases(t, now) {
    var l = st.leases.get(t.key);
    return l ? l.rows.filter(function (x) { return x.expires_at_ms > now; }).length : 0;
  }

  function leaseLines(c, t, now) {
    var l = st.leases.get(t.key);
    var sig = l ? JSON.stringify(l) : "";
    if (c.leasesSig !== sig) {
      c.leasesSig = sig;
      c.leases.textContent = "";
      c.leaseClocks = [];
      c.leases.hidden = !l || (l.rows.length === 0 && !l.error);
      if (l && l.error) {
        c.leases.appendChild(el("div", "off", "Leases not shown: " + l.error));
      } else if (l && l.rows.length > 0) {
        var owned = l.rows.reduce(function (n, x) { return n + (Number(x.bookings) || 0); }, 0);
        c.leases.appendChild(el("div", "h", "Frontend leases · " + fmt(l.rows.length) + " live · " + fmt(owned) + " owned booking" +
          (owned === 1 ? "" : "s")));
        l.rows.forEach(function (x) {
          var line = el("div", "ls");
          line.dataset.owner = String(x.owner);
          line.dataset.bookings = String(x.bookings);
          line.dataset.expires = String(x.expires_at_ms);
          var own = el("span", "own", String(x.owner));
          own.title = "owner " + x.owner;
          var exp = el("span", "exp");
          exp.title = deadline(x.expires_at_ms);
          line.append(own, el("span", "bk", fmt(x.bookings) + (x.bookings === 1 ? " booking" : " bookings")), exp);
          c.leases.appendChild(line);
          c.leaseClocks.push({ line: line, exp: exp, at: x.expires_at_ms });
        });
      }
    }
    c.leaseClocks.forEach(function (k) {
      var left = k.at - now;
      setText(k.exp, left > 0 ? "expires in " + timeLeft(left) : "lapsed");
      k.line.classList.toggle("lapsed", !(left > 0));
    });
  }
`;
