/**
 * The frame of every console page: the header with the agent's state, the navigation, and the footer saying when
 * the page was made and in which zone its times are. Everything is in the page itself (inline style, no script, no
 * font, no image): the console works on a server with no internet, and the Content-Security-Policy
 * (console-server.ts) forbids anything else.
 *
 * Pages refresh themselves with a meta refresh (no script): the browser keeps the scroll position on a reload.
 */
import { AGENT_VERSION } from '../version.ts';
import { localTimeText, zoneName, type TimeFormat } from './format.ts';
import { html, Html } from './html.ts';
import { CONSOLE_STYLE } from './style.ts';

export const REFRESH_SECONDS = 10;

export interface PageFrame {
  readonly title: string;
  /** Which navigation entry is the current page. */
  readonly nav: 'overview' | 'files';
  readonly now: Date;
  readonly time: TimeFormat;
  /** Ready, or not (with the count of reasons), in the header of every page. */
  readonly ready: boolean;
  /** The HA role once the agent has one (issue 15): shown beside the readiness. */
  readonly role?: string | undefined;
  /** False for a page that no longer changes (a finished file). */
  readonly refresh?: boolean;
  readonly body: Html;
}

export function page(frame: PageFrame): Html {
  const refresh = frame.refresh !== false;
  const navLink = (id: PageFrame['nav'], href: string, label: string) =>
    html`<a href="${href}"${id === frame.nav ? html` aria-current="page"` : ''}>${label}</a>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${refresh && html`<meta http-equiv="refresh" content="${REFRESH_SECONDS}">`}
<title>${frame.title} · pricing-agent</title>
<link rel="icon" href="data:,">
<style>${new Html(CONSOLE_STYLE)}</style>
</head>
<body>
<header class="top">
  <a class="brand" href="/">pricing-agent</a>
  <nav>${navLink('overview', '/', 'Overview')}${navLink('files', '/files', 'Files')}</nav>
  <span class="agent-state">
    ${frame.role !== undefined && html`<span class="pill role">${frame.role}</span>`}
    <a href="/#agent" class="pill ${frame.ready ? 'ok' : 'bad'}">${frame.ready ? 'Ready' : 'Not ready'}</a>
  </span>
</header>
<main>
${frame.body}
</main>
<footer>
  Updated ${localTimeText(frame.now.toISOString(), frame.time)}${refresh ? ` · refreshes every ${REFRESH_SECONDS} s` : ''} ·
  times in ${zoneName(frame.time)} · read-only · pricing-agent ${AGENT_VERSION}
</footer>
</body>
</html>
`;
}

/** A section with a heading and an anchor. */
export function section(id: string, title: string, body: Html, aside?: Html): Html {
  return html`<section id="${id}"><h2>${title}${aside !== undefined && html` <span class="aside">${aside}</span>`}</h2>${body}</section>`;
}

export interface Column {
  readonly label: string;
  /** A number: right-aligned, tabular figures. */
  readonly num?: boolean;
  /** Left out on a phone. */
  readonly wide?: boolean;
  /** Long text that may wrap. */
  readonly text?: boolean;
  /** Short content that may wrap onto a second line. */
  readonly wrap?: boolean;
  /** On a phone, the title line of the row's card (no label). */
  readonly head?: boolean;
}

export interface Row {
  readonly cells: ReadonlyArray<Html | string | false | null | undefined>;
  /** Attributes of the row (data-* for tests). */
  readonly attrs?: Html;
}

/**
 * A table. On a wide screen it scrolls sideways inside its box rather than squeezing its columns; on a phone every
 * row becomes a small card of label/value lines (each cell carries its column's label), so nothing needs scrolling.
 */
export function dataTable(columns: readonly Column[], rows: readonly Row[], empty: string): Html {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  const cls = (c: Column) =>
    [c.num === true && 'num', c.wide === true && 'wide', c.text === true && 'text', c.wrap === true && 'wrap', c.head === true && 'head']
      .filter(Boolean)
      .join(' ');
  const head = columns.map((c) => html`<th class="${cls(c)}">${c.label}</th>`);
  const body = rows.map(
    (row) =>
      html`<tr${row.attrs ?? ''}>${columns.map((c, i) => html`<td class="${cls(c)}" data-label="${c.label}"><span class="v">${row.cells[i] ?? ''}</span></td>`)}</tr>`,
  );
  return html`<div class="table-wrap"><table class="stack"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
}

/** Label/value pairs as a grid of small cards (the figures of a section at a glance). */
export function figures(items: ReadonlyArray<readonly [string, Html | string, string?]>): Html {
  return html`<dl class="figures">${items.map(
    ([label, value, tone]) => html`<div class="figure${tone ? ` ${tone}` : ''}"><dt>${label}</dt><dd>${value}</dd></div>`,
  )}</dl>`;
}

/** A ledger or job status as a coloured word. */
export function statusPill(status: string): Html {
  const tone = status === 'done' ? 'ok' : status === 'failed' ? 'bad' : status === 'duplicate' ? 'muted' : 'busy';
  return html`<span class="pill ${tone}">${status}</span>`;
}
