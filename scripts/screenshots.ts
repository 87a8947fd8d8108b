/**
 * `npm run screenshots [-- --out DIR]`: PNGs of the web console's main pages for the docs (default
 * docs/screenshots/), at 1024 px and on a phone's width, in the system's Chromium (scripts/chromium.ts).
 *
 * The data is the demo's (src/demo/run-demo.ts: four sample files, one with a rejected row, 300 approvals with
 * amendments and cancellations), with one POS consumer that has read part of the feed, so that every section shows
 * something. The agent runs while the pages are taken, then the demo folder is removed.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runDemo } from '../src/demo/run-demo.ts';
import { openStateDb } from '../src/store/open-state-db.ts';
import { ackConsumer, maxSeq } from '../src/store/price-feed.ts';
import { listFiles } from '../src/store/push-ledger-views.ts';
import { launchChromium } from './chromium.ts';

const { values } = parseArgs({ options: { out: { type: 'string', default: 'docs/screenshots' } } });
const out = resolve(values.out);

const DESKTOP = { width: 1024, height: 768 };
const PHONE = { width: 390, height: 844 };

interface Shot {
  readonly file: string;
  readonly path: (ids: { rejected: number }) => string;
  readonly viewport: { width: number; height: number };
}

const SHOTS: readonly Shot[] = [
  { file: 'overview-1024.png', path: () => '/', viewport: DESKTOP },
  { file: 'files-1024.png', path: () => '/files', viewport: DESKTOP },
  { file: 'file-1024.png', path: ({ rejected }) => `/files/${rejected}`, viewport: DESKTOP },
  { file: 'overview-phone.png', path: () => '/', viewport: PHONE },
  { file: 'file-phone.png', path: ({ rejected }) => `/files/${rejected}`, viewport: PHONE },
];

const dir = await mkdtemp(join(tmpdir(), 'pricing-agent-screenshots-'));
await mkdir(out, { recursive: true });
try {
  const summary = await runDemo({
    dir,
    say: (text) => process.stderr.write(`screenshots: ${text}\n`),
    whileRunning: async (url, { db, layout }) => {
      // A POS that has read most of the feed (a second connection, as a POS would have; the agent keeps running).
      const writer = await openStateDb({ dir: layout.stateDir, backend: 'sqlite', postgres: null });
      try {
        await ackConsumer(writer, 'pos-store-12', Math.max(0, (await maxSeq(writer)) - 37));
      } finally {
        await writer.close();
      }
      const files = await listFiles(db, { limit: 100 });
      const rejected = files.filter((f) => (f.rows_rejected ?? 0) > 0).at(-1)?.id ?? 1;
      const browser = await launchChromium();
      try {
        for (const shot of SHOTS) {
          const page = await browser.newPage({ viewport: shot.viewport, deviceScaleFactor: 1 });
          await page.goto(new URL(shot.path({ rejected }), url).href, { waitUntil: 'load' });
          await page.screenshot({ path: join(out, shot.file), fullPage: true });
          await page.close();
          process.stderr.write(`screenshots: ${join(out, shot.file)}\n`);
        }
      } finally {
        await browser.close();
      }
    },
  });
  if (!summary.ok) process.stderr.write('screenshots: the demo did not check out; the pages show what it did\n');
} finally {
  await rm(dir, { recursive: true, force: true });
}
