/** The docs page's stylesheet: system fonts only, light and dark from the OS setting. */
export const DOCS_CSS = `
:root{--bg:#f7f8fa;--panel:#fff;--ink:#1c2330;--muted:#667085;--line:#e4e7ec;--code:#f1f3f6;
--get:#0b7a4b;--post:#2457c5;--ok:#0b7a4b;--err:#b42318;--accent:#6941c6}
@media (prefers-color-scheme:dark){:root{--bg:#0f1216;--panel:#161a20;--ink:#e6e9ef;--muted:#98a2b3;
--line:#262c35;--code:#1d232b;--get:#3ccb8a;--post:#7aa2ff;--ok:#3ccb8a;--err:#ff7a6e;--accent:#b39cff}}
*{box-sizing:border-box}
body{margin:0;display:grid;grid-template-columns:270px 1fr;min-height:100vh;background:var(--bg);color:var(--ink);
font:15px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
nav{position:sticky;top:0;height:100vh;overflow:auto;padding:20px 14px;border-right:1px solid var(--line);background:var(--panel)}
nav a{display:block;padding:4px 6px;border-radius:6px;color:var(--ink);text-decoration:none;font:13px ui-monospace,SFMono-Regular,Menlo,monospace;white-space:nowrap}
nav a:hover{background:var(--code)}
nav .links a{display:inline;padding:0;font:inherit;color:var(--accent)}
.brand{font-weight:700;font-size:17px}
.nav-tag{margin:16px 0 4px;font-size:11px;letter-spacing:.08em;text-transform:uppercase;color:var(--muted)}
main{padding:28px 40px 80px;max-width:1100px}
h1{margin:0 0 6px;font-size:28px}h2{margin:40px 0 12px;padding-bottom:6px;border-bottom:1px solid var(--line)}
h3{margin:0 0 6px;font-size:18px;display:flex;align-items:center;gap:10px;flex-wrap:wrap}
h4{margin:18px 0 8px;font-size:14px}
.lead{font-size:17px}.muted{color:var(--muted);font-weight:400}
.note{background:var(--panel);border:1px solid var(--line);border-left:4px solid var(--accent);border-radius:8px;padding:10px 14px;margin:10px 0}
.op{background:var(--panel);border:1px solid var(--line);border-radius:12px;padding:18px 22px;margin:14px 0;scroll-margin-top:12px}
.summary{font-weight:600;margin:0}
.path{font:600 17px ui-monospace,SFMono-Regular,Menlo,monospace}
.method{display:inline-block;min-width:44px;text-align:center;padding:1px 6px;border-radius:5px;color:#fff;font:700 11px ui-monospace,monospace}
.method.get{background:var(--get)}.method.post{background:var(--post)}.method.patch{background:var(--accent)}.method.delete{background:var(--err)}
.access{font-size:11px;padding:1px 8px;border-radius:99px;border:1px solid var(--line);color:var(--muted)}
.access.admin{border-color:var(--err);color:var(--err)}.access.public{border-color:var(--ok);color:var(--ok)}
code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--code);padding:1px 4px;border-radius:4px}
table.fields{width:100%;border-collapse:collapse;font-size:13.5px;margin:4px 0 8px}
.fields th{text-align:left;font-weight:600;color:var(--muted);border-bottom:1px solid var(--line);padding:5px 8px}
.fields td{border-bottom:1px solid var(--line);padding:5px 8px;vertical-align:top}
.fields td.type{font:12.5px ui-monospace,monospace;color:var(--accent)}
.fields tr.variant td{background:var(--code);font-size:12.5px;padding-top:7px}
.req{font-size:10.5px;color:var(--err)}.opt{font-size:10.5px;color:var(--muted)}
.chip{display:inline-block;font:11.5px ui-monospace,monospace;background:var(--code);border-radius:4px;padding:0 5px;margin:1px 0}
pre.example{background:var(--code);border-radius:8px;padding:10px 12px;overflow:auto;font:12.5px/1.45 ui-monospace,monospace;margin:4px 0 8px}
.example-label{font-size:12px;color:var(--muted);margin-top:8px}
.schema-name{font:600 12px ui-monospace,monospace;color:var(--muted);margin-top:4px}
dl.responses{margin:0}dl.responses dt{float:left;clear:left;width:52px;padding-top:2px}
dl.responses dd{margin:0 0 10px 60px}
.status{display:inline-block;font:700 12px ui-monospace,monospace;padding:1px 6px;border-radius:5px}
.status.ok{color:var(--ok);border:1px solid var(--ok)}.status.err{color:var(--err);border:1px solid var(--err)}
@media (max-width:800px){body{grid-template-columns:1fr}nav{position:static;height:auto}main{padding:16px}}
`;
