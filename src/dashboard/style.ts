/** The dashboard's stylesheet: dark by default (a wall screen), light on request of the OS. */
export const DASHBOARD_CSS = `
:root{--bg:#0d1117;--panel:#151b23;--panel2:#1b222c;--ink:#e6edf3;--muted:#8b949e;--line:#262f3a;
--decode:#4c8dff;--decode-bg:rgba(76,141,255,.14);--prefill:#f5a524;--prefill-bg:rgba(245,165,36,.14);
--ok:#3fb950;--warn:#d29922;--err:#f85149}
@media (prefers-color-scheme:light){:root{--bg:#f5f7fa;--panel:#fff;--panel2:#f0f3f7;--ink:#1f2328;--muted:#57606a;
--line:#d8dee4;--decode:#2463eb;--decode-bg:rgba(36,99,235,.12);--prefill:#c27803;--prefill-bg:rgba(194,120,3,.13)}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.top{position:sticky;top:0;z-index:2;display:flex;flex-wrap:wrap;align-items:center;gap:10px 18px;padding:10px 22px;
background:var(--panel);border-bottom:1px solid var(--line)}
.brand{font-weight:700;font-size:17px;white-space:nowrap}.brand span{font-weight:400;color:var(--muted);font-size:13px;margin-left:6px}
.status{display:flex;align-items:center;gap:7px;font-size:13px;color:var(--muted);min-width:190px}
.dot{width:9px;height:9px;border-radius:50%;background:var(--muted)}
.status.live .dot{background:var(--ok);box-shadow:0 0 0 3px rgba(63,185,80,.2)}
.status.error .dot{background:var(--err)}.status.error{color:var(--err)}.status.paused .dot{background:var(--warn)}
.controls{display:flex;flex-wrap:wrap;align-items:center;gap:8px;margin-left:auto}
input,select,button{font:inherit;font-size:13px;color:var(--ink);background:var(--panel2);border:1px solid var(--line);
border-radius:6px;padding:5px 9px}
button{cursor:pointer}button:hover{border-color:var(--muted)}
button.primary{background:var(--decode);border-color:var(--decode);color:#fff}
#token{width:190px}#filter{width:200px}
.token-state{font-size:12px;color:var(--muted)}.token-state.set{color:var(--ok)}
a{color:var(--decode)}
.totals{display:grid;grid-template-columns:repeat(8,minmax(120px,1fr));gap:12px;padding:16px 22px 4px}
.tile{background:var(--panel);border:1px solid var(--line);border-radius:10px;padding:10px 14px}
.tile .k{font-size:11.5px;letter-spacing:.06em;text-transform:uppercase;color:var(--muted)}
.tile .v{font-size:26px;font-weight:650;font-variant-numeric:tabular-nums}
.tile.decode .v{color:var(--decode)}.tile.prefill .v{color:var(--prefill)}.tile.catalog .v{color:var(--ok)}.tile.leases .v{color:var(--decode)}
.notice{margin:12px 22px 0;padding:10px 14px;border-radius:8px;border:1px solid var(--warn);color:var(--ink);background:var(--panel)}
.notice.error{border-color:var(--err)}
main{padding:8px 22px 40px}
.empty{padding:60px 0;text-align:center;color:var(--muted);font-size:15px}
.tracker{background:var(--panel);border:1px solid var(--line);border-radius:12px;margin:14px 0;overflow:hidden}
.tracker>header{display:flex;flex-wrap:wrap;align-items:baseline;gap:6px 14px;padding:12px 16px;border-bottom:1px solid var(--line)}
.tracker h2{margin:0;font-size:16px;font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
.tenant{font-size:12px;padding:1px 8px;border-radius:99px;background:var(--panel2);border:1px solid var(--line)}
.meta{color:var(--muted);font-size:12.5px}
.sums{margin-left:auto;display:flex;gap:16px;font-size:13px;color:var(--muted)}
.sums b{font-size:15px;color:var(--ink);font-variant-numeric:tabular-nums}
.sums .d b{color:var(--decode)}.sums .p b{color:var(--prefill)}
.replicas{display:flex;flex-wrap:wrap;gap:8px;align-items:center;padding:7px 16px;font-size:12.5px;color:var(--muted);
background:var(--panel2);border-bottom:1px solid var(--line)}
.peer{display:inline-flex;gap:6px;align-items:center;padding:1px 8px;border-radius:99px;border:1px solid var(--line);color:var(--ink)}
.peer .dot{width:7px;height:7px}.peer.ok .dot{background:var(--ok)}.peer.backing_off .dot{background:var(--warn)}
.peer.resync .dot{background:var(--err)}
.grid{display:grid;grid-template-columns:minmax(230px,300px) 1fr 1fr 70px 90px;column-gap:16px;padding:4px 16px 10px}
.grid .h{font-size:11px;letter-spacing:.06em;text-transform:uppercase;color:var(--muted);padding:8px 0 4px}
.grid .h.num{text-align:right}
.who{display:flex;align-items:center;gap:8px;padding:5px 0;min-width:0;border-top:1px solid var(--line)}
.wid{font:12.5px ui-monospace,SFMono-Regular,Menlo,monospace;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.rk{font-size:12px;color:var(--muted);white-space:nowrap}
.badge{font-size:10.5px;padding:0 6px;border-radius:4px;border:1px solid var(--prefill);color:var(--prefill)}
.bar{position:relative;height:22px;margin:4px 0;border-radius:5px;overflow:hidden;align-self:center}
.bar.decode{background:var(--decode-bg)}.bar.prefill{background:var(--prefill-bg)}
.fill{height:100%;width:0;transition:width .45s ease}
.decode .fill{background:var(--decode)}.prefill .fill{background:var(--prefill)}
.val{position:absolute;right:8px;top:0;line-height:22px;font-size:12.5px;font-weight:600;font-variant-numeric:tabular-nums;
text-shadow:0 0 3px var(--panel)}
.live{text-align:right;font-variant-numeric:tabular-nums;font-weight:600;align-self:center;padding-right:2px}
.cached{text-align:right;font-variant-numeric:tabular-nums;align-self:center;padding-right:2px;color:var(--muted)}
.changed{animation:flash 1s ease}
@keyframes flash{0%{background:rgba(245,165,36,.35)}100%{background:transparent}}
.leases{padding:4px 16px 10px;border-top:1px solid var(--line);font-size:12.5px}
.leases .h{font-size:11px;letter-spacing:.06em;text-transform:uppercase;color:var(--muted);padding:8px 0 4px}
.leases .off{padding:8px 0 2px;color:var(--warn)}
.ls{display:grid;grid-template-columns:minmax(230px,300px) 110px 1fr;column-gap:16px;align-items:baseline;padding:4px 0;
border-top:1px solid var(--line)}
.ls .own{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;overflow-wrap:anywhere}
.ls .bk{font-variant-numeric:tabular-nums;font-weight:600}
.ls .exp{color:var(--ok);font-variant-numeric:tabular-nums;cursor:help}.ls.lapsed .exp{color:var(--err)}
.catalog{padding:4px 16px 10px;border-top:1px solid var(--line);font-size:12.5px}
.catalog .h{font-size:11px;letter-spacing:.06em;text-transform:uppercase;color:var(--muted);padding:8px 0 4px}
.cw{display:flex;flex-wrap:wrap;align-items:baseline;gap:4px 12px;padding:4px 0;border-top:1px solid var(--line)}
.cw .lc{font-size:11px;padding:0 7px;border-radius:99px;border:1px solid var(--muted);color:var(--muted)}
.cw.schedulable .lc{border-color:var(--ok);color:var(--ok)}.cw.incomplete .lc{border-color:var(--warn);color:var(--warn)}
.cw.draining .lc{border-color:var(--prefill);color:var(--prefill)}.cw.unschedulable .lc{border-color:var(--err);color:var(--err)}
.cw .ep{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;overflow-wrap:anywhere}.cw .dp{color:var(--muted)}
.cw .why{flex-basis:100%;color:var(--warn)}
footer{padding:0 22px 24px;color:var(--muted);font-size:12px}
@media (max-width:900px){.totals{grid-template-columns:repeat(3,1fr)}.grid{grid-template-columns:1fr 1fr;}
.grid .h{display:none}.who{grid-column:1/-1}.live,.cached{display:none}
.ls{grid-template-columns:1fr auto}.ls .exp{grid-column:1/-1}}
`;
