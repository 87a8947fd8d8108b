/**
 * The web console in a real browser (the system's Chromium through playwright-core) against `pricing-agent run` as a
 * child process on the sandbox: the pages load without a console error, show the sources, files and counts that
 * `status --json` and `files list --json` show, the links download the real report and rejects byte for byte, the
 * numbers are right-aligned and the times local with their zone, nothing is wider than the screen at 1024 px or on
 * a phone, a file name full of markup stays text, and a rejected key is the first thing on the page.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { chromiumPath, launchChromium } from '../../scripts/chromium.ts';
import type { FileDetail, FileListItem } from '../../src/status/file-list.ts';
import type { StatusReport } from '../../src/status/status-report.ts';
import { daemonHarness, until, untilReady, type DaemonHarness } from '../support/daemon-harness.ts';
import { runCli } from '../support/run-cli.ts';
import { skipWithout } from '../support/required-tool.ts';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

const CHROMIUM = chromiumPath();
const MARKUP_NAME = 'a<b>&"c"<img src=x onerror=alert(1)>.csv';
/** A name as long as a store's export tool writes them: the console shows it whole, wrapped, never cut. */
const LONG_NAME = 'weekly-price-export-region-north-west-store-cluster-0042-2026-11-20T08-00-00-final-corrected.csv';

let h: DaemonHarness;
let browser: Browser;
/**
 * One browser context for every page: the console keeps nothing in the browser (no cookie, no storage; its pages are
 * served no-store), and a context per page cost Chromium about 7 CPU-seconds more over this file's 29 pages.
 */
let context: BrowserContext;
let consoleUrl = '';
let status: StatusReport;
let files: FileListItem[];
const problems: string[] = [];

async function cli(args: string[]): Promise<string> {
  const run = await runCli([...args, '--config', h.configFile]);
  expect(run.stderr).toBe('');
  return run.stdout;
}

/** The meta refresh each page's document was served with (its seconds), or null when it had none. */
const servedRefresh = new WeakMap<Page, string | null>();

/**
 * A page that records every console error or warning and uncaught error. The page's own document is loaded without
 * its meta refresh (what it was served with is in servedRefresh): a test that reads or clicks for longer than the
 * page's 10 s must not meet the reload, which on a loaded machine came first and emptied a table or cancelled a
 * download.
 */
async function open(path: string, width = 1024): Promise<Page> {
  const page = await context.newPage();
  await page.setViewportSize({ width, height: 800 });
  await page.route(new URL(path, consoleUrl).href, async (route) => {
    const response = await route.fetch();
    const html = await response.text();
    const refresh = /<meta http-equiv="refresh" content="([^"]*)">/.exec(html);
    servedRefresh.set(page, refresh?.[1] ?? null);
    await route.fulfill({ response, body: refresh === null ? html : html.replace(refresh[0], '') });
  });
  page.on('console', (m: ConsoleMessage) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`${path}: console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`${path}: ${e.message}`));
  const response = await page.goto(new URL(path, consoleUrl).href);
  expect(response?.status(), path).toBe(200);
  return page;
}

async function cellText(page: Page, row: string, label: string): Promise<string> {
  return (await page.locator(`${row} td[data-label="${label}"]`).innerText()).trim();
}

/** What the page functions below use of the browser (this project's TypeScript has no DOM types). */
interface InPage {
  getComputedStyle(element: unknown): { textAlign: string };
  document: { documentElement: { scrollWidth: number } };
}

/** Enough of the DOM to measure where elements are (a box and a text per element). */
interface InPageBoxes {
  document: {
    querySelectorAll(selector: string): Iterable<{
      textContent: string;
      scrollWidth: number;
      clientWidth: number;
      getBoundingClientRect(): { left: number; right: number; height: number };
      getClientRects(): { length: number };
    }>;
    /** A range over an element's contents: one client rect per line its text takes. */
    createRange(): { selectNodeContents(node: unknown): void; getClientRects(): { length: number } };
  };
}

/** Enough of the DOM to find cut or spilling elements. */
interface InPageElements {
  getComputedStyle(element: unknown): { textOverflow: string; overflowX: string };
  document: { querySelectorAll(selector: string): Iterable<{ tagName: string; className: string; textContent: string; scrollWidth: number; clientWidth: number }> };
}

const grouped = (n: number | null) => (n === null ? '–' : n.toLocaleString('en-US'));

describe.skipIf(skipWithout('Chromium', CHROMIUM !== undefined, 'chromium'))(`the web console in Chromium (${CHROMIUM ?? 'none installed: apt-get install chromium'})`, () => {
  beforeAll(async () => {
    h = await daemonHarness({ approvals: 30 });
    await h.startReady(
      [
        `api:\n  base_url: ${h.sandbox.url}\n  key_file: ./api-key\n`,
        `state:\n  dir: ./state\n`,
        `http:\n  port: 0\n`,
        `daemon:\n  key_check_interval_ms: 1000\n`,
        // A feed for tills, so that the overview shows its address.
        `feed:\n  listen: 127.0.0.1:0\n  consumers:\n    - name: till-0417\n      token_sha256: ${'ab'.repeat(32)}\n      stores: "*"\n`,
        'sources:\n',
        '  - name: products\n    entity: products\n    path: ./inbox/products\n    stable_ms: 200\n',
        '  - name: tx\n    entity: transactions\n    path: ./inbox/tx\n    stable_ms: 200\n',
        // A file here stays waiting: it is never stable long enough within the test.
        '  - name: stores\n    entity: product_store\n    path: ./inbox/stores\n    stable_ms: 600000\n',
      ].join(''),
    );
    consoleUrl = `${h.httpUrl()}/`;
    await writeFile(join(h.inbox('products'), 'products.csv'), 'item_id,sku,product_name\nA-1,A-1,Honey\nA-2,A-2,Cheese\nA-3,A-3,Bread\n');
    await writeFile(join(h.inbox('products'), MARKUP_NAME), 'item_id,sku,product_name\nA-4,A-4,Tea\n');
    await writeFile(join(h.inbox('products'), 'broken.csv'), 'product_name\nTea\n'); // no item_id column: the file fails
    await writeFile(join(h.inbox('products'), LONG_NAME), 'item_id,sku,product_name\nA-5,A-5,Jam\n');
    await writeFile(
      join(h.inbox('tx'), 'tx.csv'),
      'transaction_id,item_id,transaction_timestamp,quantity,price\nT1,A-1,2026-11-20T08:00:00Z,1,2.99\nT2,A-2,yesterday,1,1.99\nT3,A-3,2026-11-20T08:05:00Z,2,0.99\n',
    );
    await writeFile(join(h.inbox('stores'), 'later.csv'), 'item_id,store_id,current_price\n');
    for (const [source, name] of [['products', 'products.csv'], ['products', MARKUP_NAME], ['products', 'broken.csv'], ['products', LONG_NAME], ['tx', 'tx.csv']] as const) {
      await h.report(source, name);
    }
    // tx.csv's rejects CSV, corrected and dropped back (README, "Fix and drop again").
    const rejects = (await h.report('tx', 'tx.csv')).replace(/\.report\.json$/, '.rejects.csv');
    await writeFile(join(h.inbox('tx'), 'tx.csv.rejects.csv'), (await readFile(rejects, 'utf8')).replace('yesterday', '2026-11-20T08:10:00Z'));
    // Archived as tx.csv.rejects.<id>.csv: tx.csv's own rejects CSV is already there under its name.
    await h.report('tx', /tx\.csv\.rejects\.\d+\.csv\.report\.json$/);
    await until(() => h.sandbox.control.state().approvals.pending === 0, 'the pull to store every approval', 30_000);
    await cli(['outbox', 'ack', '--consumer', 'pos-store-12', '--seq', '5']);
    status = JSON.parse(await cli(['status', '--json', '--offline'])) as StatusReport;
    files = JSON.parse(await cli(['files', 'list', '--json'])) as FileListItem[];
    browser = await launchChromium();
    context = await browser.newContext({ acceptDownloads: true });
  });

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('the overview shows every source with the counts of status --json, the pull and the outbox, with right-aligned numbers and local times', async () => {
    const page = await open('/');
    expect(servedRefresh.get(page)).toBe('10');
    expect(status.sources.map((s) => s.name)).toEqual(['products', 'tx', 'stores']);
    for (const s of status.sources) {
      const row = `tr[data-source="${s.name}"]`;
      expect(await cellText(page, row, 'Waiting')).toBe(grouped(s.waiting));
      expect(await cellText(page, row, 'Processing')).toBe(grouped(s.processing));
      expect(await cellText(page, row, 'Done today')).toBe(grouped(s.done_today));
      expect(await cellText(page, row, 'Failed today')).toBe(grouped(s.failed_today));
      expect(await cellText(page, row, 'Rows accepted')).toBe(grouped(s.rows_accepted_today));
      expect(await cellText(page, row, 'Rows rejected')).toBe(grouped(s.rows_rejected_today));
      if (s.last_file !== null) expect(await cellText(page, row, 'Last file')).toContain(s.last_file.name);
    }
    expect(status.sources.find((s) => s.name === 'stores')?.waiting).toBe(1);
    expect(status.sources.find((s) => s.name === 'tx')?.rows_rejected_today).toBe(1);
    expect(status.sources.find((s) => s.name === 'products')).toMatchObject({ done_today: 3, failed_today: 1 });
    // The last files, newest first, with their counts.
    for (const f of files) {
      const row = `#files tr[data-file-id="${f.id}"]`;
      expect(await cellText(page, row, 'File')).toContain(f.name);
      expect(await cellText(page, row, 'Read')).toBe(grouped(f.rows_read));
      expect(await cellText(page, row, 'Accepted')).toBe(grouped(f.rows_accepted));
      expect(await cellText(page, row, 'Rejected')).toBe(grouped(f.rows_rejected));
    }
    // The pull and the outbox: the figures of status --json, and the POS consumer with its lag.
    const pull = await page.locator('#pull').innerText();
    expect(pull).toMatch(new RegExp(`VERSIONS STORED\\s+${grouped(status.pull?.approvals.total ?? -1)}`, 'i'));
    expect(pull).toMatch(new RegExp(`ACKNOWLEDGED\\s+${grouped(status.pull?.approvals.acknowledged ?? -1)}`, 'i'));
    const consumer = status.outbox?.consumers.find((c) => c.consumer === 'pos-store-12');
    expect(consumer).toBeDefined();
    expect(await page.locator('#outbox tr', { hasText: 'pos-store-12' }).locator('td[data-label="Lag"]').innerText()).toBe(grouped(consumer?.lag ?? -1));
    expect(await page.locator('#readiness').innerText()).toContain('ready');
    // Numbers right-aligned; times local, with the zone.
    const align = await page
      .locator('tr[data-source="products"] td[data-label="Done today"]')
      .evaluate((td) => (globalThis as unknown as InPage).getComputedStyle(td).textAlign);
    expect(align).toBe('right');
    const times = await page.locator('main time').allInnerTexts();
    expect(times.length).toBeGreaterThan(0);
    for (const t of times) expect(t).toMatch(/^(\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}:\d{2} ([A-Z]{2,5}|GMT[+-]\d{1,2}(:\d{2})?)$/);
    // A file name full of markup is text, not markup (and no script ran: no console error below).
    expect(await page.locator('#files').innerText()).toContain(MARKUP_NAME);
    expect(await page.locator('#files b, #files img').count()).toBe(0);
    await page.close();
  });

  it('the files page lists what files list --json lists; the links download the real report and rejects', async () => {
    const tx = files.find((f) => f.name === 'tx.csv');
    const detail = JSON.parse(await cli(['files', 'show', String(tx?.id), '--json'])) as FileDetail;
    const page = await open('/files');
    expect(await page.locator('tr[data-file-id]').count()).toBe(files.length);
    expect(detail.report_path).not.toBeNull();
    expect(detail.rejects_path).not.toBeNull();
    const row = page.locator(`tr[data-file-id="${tx?.id}"]`);
    for (const [link, path] of [['a.report-link', detail.report_path], ['a.rejects-link', detail.rejects_path]] as const) {
      const [download] = await Promise.all([page.waitForEvent('download'), row.locator(link).click()]);
      expect(download.suggestedFilename()).toBe(path?.split('/').at(-1));
      expect(await readFile((await download.path()) ?? '')).toEqual(await readFile(path ?? ''));
    }
    await page.close();
  });

  it('every list says why a failed file failed: its code and one sentence under the red badge', async () => {
    const broken = files.find((f) => f.name === 'broken.csv');
    expect(broken?.status).toBe('failed');
    expect(broken?.error_code).toMatch(/^[A-Z_]+$/);
    expect(broken?.error_message).toMatch(/\w/);
    for (const path of ['/', '/files', '/files?source=products']) {
      const page = await open(path);
      const why = page.locator(`tr[data-file-id="${broken?.id}"] td[data-label="Status"] .why`);
      expect(await why.innerText(), path).toBe(`${broken?.error_code} ${broken?.error_message}`);
      expect(await why.locator('code').innerText(), path).toBe(broken?.error_code);
      await page.close();
    }
  });

  it('a corrected rejects CSV is shown as the fix of its file: in the files list, on its page, and as the last file in status', async () => {
    const tx = files.find((f) => f.name === 'tx.csv');
    const fix = files.find((f) => f.name === 'tx.csv.rejects.csv');
    expect(fix?.fixes_file_id).toBe(tx?.id);
    expect(status.sources.find((s) => s.name === 'tx')?.last_file).toMatchObject({ id: fix?.id, fixes_file_id: tx?.id });
    const list = await open('/files');
    const link = list.locator(`tr[data-file-id="${fix?.id}"] a.fixes`);
    expect(await link.innerText()).toBe(`fixes #${tx?.id}`);
    await link.click();
    expect(await list.locator('h1').innerText()).toContain('tx.csv');
    await list.close();
    const page = await open(`/files/${fix?.id}`);
    expect(await page.locator('#history').innerText()).toContain(`A corrected rejects CSV: it fixes the rejects of #${tx?.id} tx.csv`);
    expect(JSON.parse(await page.locator('#report pre').innerText())).toMatchObject({ fixes: { id: tx?.id, file: 'tx.csv' }, rows: { read: 1, accepted: 1 } });
    await page.close();
  });

  it("a file's page shows its counts, its history in the ledger, the first rejects and the report", async () => {
    const tx = files.find((f) => f.name === 'tx.csv');
    const page = await open(`/files/${tx?.id}`);
    expect(await page.locator('h1').innerText()).toContain('tx.csv');
    const history = await page.locator('#history').innerText();
    expect(history).toContain('Claimed from');
    expect(history).toMatch(/1 batch committed: 2 rows sent, 2 accepted, 0 refused by the API/);
    expect(history).toContain('Finished');
    const reject = page.locator('#rejects tr[data-line="3"]');
    expect(await reject.locator('td[data-label="Field"]').innerText()).toBe('transaction_timestamp');
    // The row's fields under the file's own column names.
    expect(await reject.locator('td[data-label="transaction_timestamp"]').innerText()).toBe('yesterday');
    expect(await reject.locator('td[data-label="transaction_id"]').innerText()).toBe('T2');
    expect(JSON.parse(await page.locator('#report pre').innerText())).toMatchObject({ file: 'tx.csv', rows: { read: 3, accepted: 2, rejected: 1 } });
    expect(servedRefresh.get(page)).toBeNull(); // a finished file does not change
    await page.close();
  });

  it("a failed file's page shows a source drafted from the file (sources suggest), with what it lacks as placeholders", async () => {
    const broken = files.find((f) => f.name === 'broken.csv');
    const page = await open(`/files/${broken?.id}`);
    const draft = await page.locator('#suggest pre').innerText();
    expect(draft).toContain('entity: products');
    expect(draft).toMatch(/product_name: product_name/);
    expect(draft).toContain('item_id: ${SET_ITEM_ID}');
    expect(await page.locator('#suggest').innerText()).toContain('pricing-agent sources suggest');
    const done = await open(`/files/${files.find((f) => f.name === 'products.csv')?.id}`);
    expect(await done.locator('#suggest').count()).toBe(0); // only a failed file gets one
    await Promise.all([page.close(), done.close()]);
  });

  it('nothing is wider than the screen, cut or spilling out of its cell, at 1024 px, 1440 px and on a phone', async () => {
    const long = files.find((f) => f.name === LONG_NAME);
    const tx = files.find((f) => f.name === 'tx.csv');
    expect(long).toBeDefined();
    for (const width of [1024, 1440, 390]) {
      for (const path of ['/', '/files', `/files/${long?.id}`, `/files/${tx?.id}`]) {
        const page = await open(path, width);
        // Text cut by an ellipsis or a hidden overflow, and cells whose content is wider than the cell.
        const cut = await page.evaluate(() => {
          const w = globalThis as unknown as InPageElements;
          return [...w.document.querySelectorAll('main *')]
            .filter((e) => {
              const css = w.getComputedStyle(e);
              const hides = css.textOverflow === 'ellipsis' || css.overflowX === 'hidden' || css.overflowX === 'clip';
              return (hides && e.scrollWidth > e.clientWidth) || (e.tagName === 'TD' && e.scrollWidth > e.clientWidth + 1);
            })
            .map((e) => `${e.tagName.toLowerCase()}.${e.className}: ${e.textContent.slice(0, 60)}`);
        });
        expect(cut, `${path} at ${width} px`).toEqual([]);
        if (path !== `/files/${tx?.id}`) expect(await page.locator('main').innerText(), `${path} at ${width} px`).toContain(LONG_NAME);
        // Tables scroll inside their own box (1024) or become cards (phone); the page itself never scrolls sideways.
        const scrollWidth = await page.evaluate(() => (globalThis as unknown as InPage).document.documentElement.scrollWidth);
        expect(scrollWidth, `${path} at ${width} px`).toBeLessThanOrEqual(width);
        await page.close();
      }
    }
  });

  it('keeps every download link, the Downloads column and the feed address whole and on screen at 1024 px, 1440 px and on a phone', async () => {
    const boxes = (page: Page, selector: string) =>
      page.evaluate((s) => {
        const w = globalThis as unknown as InPageBoxes;
        return [...w.document.querySelectorAll(s)].map((e) => {
          const box = e.getBoundingClientRect();
          const range = w.document.createRange();
          range.selectNodeContents(e);
          return { text: e.textContent, left: box.left, right: box.right, lines: range.getClientRects().length, scrolls: e.scrollWidth > e.clientWidth };
        });
      }, selector);
    for (const width of [1024, 1440, 390]) {
      const list = await open('/files', width);
      const links = await boxes(list, 'a.report-link, a.rejects-link');
      expect(links.length, `download links on /files at ${width} px`).toBeGreaterThanOrEqual(files.filter((f) => f.final_path !== null).length);
      // On screen without scrolling the table sideways, each link in one piece.
      for (const link of links) expect([link.text, link.left >= 0 && link.right <= width, link.lines], `at ${width} px`).toEqual([link.text, true, 1]);
      if (width >= 1024) expect((await boxes(list, '.table-wrap')).map((t) => t.scrolls), `the files table scrolls sideways at ${width} px`).not.toContain(true);
      await list.close();
      const overview = await open('/', width);
      const [address] = await boxes(overview, '#feed .figure.address dd');
      expect(address?.text).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect([address?.lines, address?.scrolls, (address?.right ?? width + 1) <= width], `the feed address at ${width} px`).toEqual([1, false, true]);
      await overview.close();
    }
  });

  it('a rejected key is the first thing on every page', async () => {
    h.sandbox.control.rotateKey();
    await writeFile(join(h.inbox('tx'), 'after-rotation.csv'), 'transaction_id,item_id,transaction_timestamp,quantity,price\nT9,A-1,2026-11-20T09:00:00Z,1,2.99\n');
    expect(await untilReady(h, 503)).toContain('rejected the key');
    const page = await open('/');
    const alert = page.locator('main > .alert.bad').first();
    expect(await alert.innerText()).toContain('The API rejected the key (401)');
    expect(await page.locator('header .pill.bad').innerText()).toBe('Not ready');
    await page.close();
  });

  it('no page logged a console error or an uncaught error', () => {
    expect(problems).toEqual([]);
  });
});
