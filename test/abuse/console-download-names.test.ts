/**
 * Issue 27 point 10: anyone who can drop a file chooses its name, and the console's downloads (report, rejects)
 * put that name in a Content-Disposition header. A name with a character outside ASCII (`Preise-€.csv`) or a
 * control character made Node refuse the header: the download answered 500. A real daemon pushes such files and
 * its console serves their downloads: 200, the bytes of the file, an ASCII `filename=` and the exact `filename*`.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { daemonHarnessPerTest, findReport } from '../support/daemon-harness.ts';
import { runCli } from '../support/run-cli.ts';

const openHarness = daemonHarnessPerTest();

/** The exact name from an RFC 5987 `filename*` (UTF-8''...), decoded strictly. */
function extValue(disposition: string): string {
  const encoded = /filename\*=UTF-8''([^;\s]+)/.exec(disposition)?.[1];
  if (encoded === undefined) throw new Error(`no filename* in ${disposition}`);
  // RFC 5987 attr-char only: anything else must be percent-encoded.
  expect(encoded).toMatch(/^(?:[A-Za-z0-9!#$&+\-.^_`|~]|%[0-9A-F]{2})+$/);
  return decodeURIComponent(encoded);
}

const NAMES = ['Preise-€.csv', 'Preise\u0001Q4\t(2026)*\'x.csv', 'Prix-crème-brûlée-ü-日本.csv'];

describe('console downloads of files named outside ASCII', () => {
  it('serves the report and the rejects of Preise-€.csv and of a name with control characters', async () => {
    const h = await openHarness();
    const daemon = await h.startReady(
      await h.configYaml(`http:\n  port: 0\n`, `sources:\n  - name: tx\n    entity: transactions\n    path: ./inbox/tx\n    stable_ms: 200\n    reject_threshold: 0.9\n`),
    );
    const url = h.httpUrl();
    for (const [i, name] of NAMES.entries()) {
      await writeFile(
        join(h.inbox('tx'), name),
        `transaction_id,item_id,transaction_timestamp,quantity,price\nT${i},ITEM-1,2026-11-20T08:00:00Z,1,1.99\nT${i}b,ITEM-1,not a time,1,1.99\n`,
      );
    }
    for (const name of NAMES) await h.report('tx', name);
    const listed = JSON.parse((await runCli(['files', 'list', '--json', '--config', h.configFile])).stdout) as { id: number; name: string }[];
    for (const name of NAMES) {
      const id = listed.find((f) => f.name === name)?.id;
      expect(id, name).toBeTypeOf('number');
      for (const part of ['report.json', 'rejects.csv']) {
        const res = await fetch(`${url}/files/${id}/${part}`);
        expect(res.status, `${name} ${part}`).toBe(200);
        const disposition = res.headers.get('content-disposition') ?? '';
        const ascii = /filename="([^"]*)"/.exec(disposition)?.[1] ?? '';
        expect(ascii).toMatch(/^[\x20-\x7e]+$/);
        expect(ascii).not.toMatch(/["\\%]/);
        const exact = extValue(disposition);
        expect(exact.endsWith(part === 'report.json' ? '.report.json' : '.csv'), exact).toBe(true);
        const body = Buffer.from(await res.arrayBuffer());
        if (part === 'report.json') {
          const report = (await findReport(h.inbox('tx'), `${name}`)) ?? '';
          expect(exact).toBe(report.split('/').at(-1));
          expect(body.equals(await readFile(report))).toBe(true);
        } else {
          expect(exact).toContain(name.replace(/\.csv$/, ''));
          expect(body.toString('utf8')).toContain('not a time');
        }
      }
    }
    expect(await daemon.stop()).toBe(0);
  });
});
