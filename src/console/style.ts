/**
 * The console's one stylesheet, inlined into every page. System fonts only. Numbers are right-aligned with tabular
 * figures; tables scroll sideways inside their box on a phone; columns marked `wide` are left out below 720 px.
 */
export const CONSOLE_STYLE = `
:root {
  --fg: #1d2433; --muted: #5d6678; --line: #dde2ea; --bg: #f5f7fa; --card: #fff;
  --ok: #17703a; --ok-bg: #e3f4e8; --bad: #a3161b; --bad-bg: #fde8e8; --busy: #8a5a00; --busy-bg: #fff3d6;
  --accent: #1f5fbf; --mono: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; background: var(--bg); color: var(--fg); line-height: 1.45;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Liberation Sans", "DejaVu Sans", sans-serif;
}
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
header.top {
  display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem;
  padding: .7rem 1.25rem; background: #18202e; color: #fff;
}
header.top .brand { color: #fff; font-weight: 700; font-size: 1.05rem; letter-spacing: .01em; }
header.top nav { display: flex; gap: 1rem; }
header.top nav a { color: #c9d3e3; padding: .15rem 0; border-bottom: 2px solid transparent; }
header.top nav a[aria-current="page"] { color: #fff; border-bottom-color: #7fb0ff; }
header.top .agent-state { margin-left: auto; display: flex; gap: .4rem; }
main { max-width: 1280px; margin: 0 auto; padding: 1rem 1.25rem 2rem; }
h1 { font-size: 1.35rem; margin: .4rem 0 .8rem; overflow-wrap: anywhere; }
h1 .sub { display: block; color: var(--muted); font-weight: 400; font-size: .95rem; margin-top: .15rem; }
h1 .pill { vertical-align: middle; }
ol.history { list-style: none; margin: 0; padding: 0; }
ol.history li { display: grid; grid-template-columns: 11.5rem minmax(0, 1fr); gap: 1rem; padding: .35rem 0; border-bottom: 1px solid var(--line); }
ol.history .when { color: var(--muted); white-space: nowrap; }
ol.history .what { overflow-wrap: anywhere; }
h2 { font-size: 1.05rem; margin: 0 0 .6rem; display: flex; align-items: baseline; gap: .75rem; flex-wrap: wrap; }
h2 .aside { font-weight: 400; font-size: .9rem; color: var(--muted); }
section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .9rem 1rem 1rem; margin: 0 0 1rem; }
.columns { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 0 1rem; }
.columns > section { min-width: 0; }
@media (max-width: 900px) { .columns { grid-template-columns: minmax(0, 1fr); } }
h3 { font-size: .95rem; margin: 1rem 0 .4rem; }
h3 .muted { font-weight: 400; font-size: .85rem; }
.table-wrap { overflow-x: auto; -webkit-overflow-scrolling: touch; }
table { border-collapse: collapse; width: 100%; font-size: .92rem; }
th, td { padding: .38rem .5rem; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; white-space: nowrap; }
th { font-size: .74rem; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); font-weight: 600; white-space: normal; vertical-align: bottom; }
tbody tr:hover { background: #f8fafc; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.text { white-space: normal; min-width: 14rem; overflow-wrap: anywhere; }
td.wrap { white-space: normal; min-width: 9rem; }
/* A long name wraps inside its column rather than being cut: the operator must be able to read and copy it whole. */
.file-name, .id { display: inline-block; max-width: 16rem; white-space: normal; overflow-wrap: anywhere; vertical-align: bottom; }
.entity { display: block; font-size: .78rem; color: var(--muted); }
a.entity { color: var(--muted); }
a.fixes, a.fixed-by { display: block; font-size: .78rem; }
/* Why a file failed, under its status: wrapped in a narrow block so the table stays within 1024 px. */
.why { display: block; max-width: 16rem; min-width: 10rem; white-space: normal; overflow-wrap: anywhere; font-size: .78rem; color: var(--bad); }
.why.held { color: var(--busy); }
.why code.release { display: block; white-space: normal; overflow-wrap: anywhere; user-select: all; }
.busy { color: var(--busy); }
.bad { color: var(--bad); }
.where { margin: .6rem 0 0; overflow-wrap: anywhere; }
time { font-variant-numeric: tabular-nums; }
.pill { display: inline-block; padding: .05rem .55rem; border-radius: 999px; font-size: .82rem; font-weight: 600; white-space: nowrap; }
.pill.ok { background: var(--ok-bg); color: var(--ok); }
.pill.bad { background: var(--bad-bg); color: var(--bad); }
.pill.busy { background: var(--busy-bg); color: var(--busy); }
.pill.muted { background: #eceff4; color: var(--muted); }
.pill.role { background: #e6eefc; color: #1d4c9a; }
header.top .pill.ok { background: #1f6b3c; color: #eafff0; }
header.top .pill.bad { background: #b3261e; color: #fff; }
.alert { border-radius: 8px; padding: .8rem 1rem; margin: 0 0 1rem; border: 1px solid; }
.alert strong { display: block; font-size: 1.02rem; margin-bottom: .15rem; }
.alert.bad { background: var(--bad-bg); border-color: #f1b4b4; color: #6e0e12; }
.alert.busy { background: var(--busy-bg); border-color: #efd08a; color: #5b3c00; }
.alert ul { margin: .3rem 0 0; padding-left: 1.2rem; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(6.8rem, 1fr)); gap: .6rem; margin: 0 0 .8rem; }
.figure { border: 1px solid var(--line); border-radius: 6px; padding: .45rem .7rem; background: #fbfcfe; min-width: 0; }
.figure dt { font-size: .75rem; color: var(--muted); text-transform: uppercase; letter-spacing: .03em; }
.figure dd { margin: .1rem 0 0; font-size: 1.05rem; font-weight: 600; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.figure dd .pill { font-size: .72rem; vertical-align: middle; }
.figure .unit { display: block; font-size: .78rem; font-weight: 400; color: var(--muted); }
.figure.bad dd { color: var(--bad); }
.figure.busy dd { color: var(--busy); }
.figure.ok dd { color: var(--ok); }
/* An address (the feed's host:port) on a row of its own, in one piece: never broken between two lines. */
.figure.address { grid-column: 1 / -1; }
.figure.address dd { overflow-wrap: normal; word-break: keep-all; font-family: var(--mono); font-size: .95rem; }
.empty { color: var(--muted); margin: .2rem 0; }
.muted { color: var(--muted); }
.downloads { display: flex; flex-wrap: wrap; gap: .5rem; margin: 0 0 1rem; }
.button { display: inline-block; padding: .35rem .8rem; border: 1px solid #b9c6da; border-radius: 6px; background: #fff; font-weight: 600; }
.filters { display: flex; flex-wrap: wrap; gap: .4rem; margin: 0 0 .8rem; }
.filters a { padding: .15rem .6rem; border: 1px solid var(--line); border-radius: 999px; background: #fff; font-size: .88rem; }
.filters a[aria-current="true"] { background: var(--accent); border-color: var(--accent); color: #fff; }
pre { margin: 0; padding: .8rem; background: #f3f5f9; border-radius: 6px; overflow-x: auto; font: .82rem/1.45 var(--mono); }
code { font-family: var(--mono); font-size: .88em; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
details summary { cursor: pointer; color: var(--accent); font-weight: 600; margin-bottom: .5rem; }
footer { max-width: 1280px; margin: 0 auto; padding: 0 1.25rem 1.5rem; color: var(--muted); font-size: .82rem; }
@media (max-width: 720px) {
  body { font-size: 14px; }
  main { padding: .75rem .6rem 1.5rem; }
  section { padding: .7rem .6rem .8rem; }
  .wide { display: none; }
  header.top { padding: .6rem .75rem; }
  .figures { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  ol.history li { grid-template-columns: minmax(0, 1fr); gap: 0; }
  /* Each row a card: the column's label on the left, the value on the right. */
  table.stack thead { display: none; }
  table.stack, table.stack tbody, table.stack tr { display: block; }
  table.stack tr { display: flex; flex-direction: column; border: 1px solid var(--line); border-radius: 6px; margin: 0 0 .5rem; padding: .2rem .5rem; }
  table.stack td { display: flex; justify-content: space-between; align-items: baseline; gap: 1rem; border: 0; padding: .12rem 0; white-space: normal; text-align: right; min-width: 0; }
  table.stack td::before { content: attr(data-label); color: var(--muted); font-size: .8rem; text-align: left; flex: none; }
  table.stack td.head { order: -1; justify-content: flex-start; text-align: left; font-weight: 600; padding: .25rem 0 .2rem; border-bottom: 1px solid var(--line); margin-bottom: .15rem; }
  table.stack td.head::before { content: none; }
  table.stack td.head .entity { display: inline; margin-left: .4rem; font-weight: 400; }
  table.stack td.wide { display: none; }
  table.stack td .v { min-width: 0; overflow-wrap: anywhere; }
  .file-name, .id { max-width: 60vw; }
}
`;
