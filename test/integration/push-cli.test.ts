/**
 * `pricing-agent push` as a child process against a sandbox in the test process: --source with a German ERP
 * export, --entity, --dry-run, exit codes 0/1/2/3, a rejected key deferring the file and the same command resuming
 * it, and the summary's paths.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.ts';
import { GERMAN_ERP_FORMAT } from '../fixtures/german-erp.ts';
import { writeAgentConfig } from '../fixtures/push/push-fixtures.ts';
import { runCli } from '../support/run-cli.ts';

let sandbox: SandboxHandle;
let stores: readonly string[];

beforeAll(async () => {
  sandbox = await startSandbox({ approvals: 0, largeGridRows: 0 });
  stores = sandbox.control.state().stores;
});
afterAll(() => sandbox.close());

const env = () => ({ PRICING_API_KEY: sandbox.apiKey });

/** The German ERP source of config.example.yaml, in a fresh directory. */
async function erpSetup(): Promise<{ dir: string; inbox: string; config: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'pa-push-cli-'));
  const inbox = join(dir, 'inbox', 'erp');
  await mkdir(inbox, { recursive: true });
  const config = await writeAgentConfig(dir, sandbox.url, [
    {
      name: 'erp',
      entity: 'product_store',
      path: './inbox/erp',
      ...GERMAN_ERP_FORMAT,
      delimiter: ';',
      defaults: { currency: 'EUR' },
    },
  ]);
  return { dir, inbox, config };
}

/** Writes `content` as `name` in a fresh setup's folder and runs `pricing-agent push <file> ...args --config <its config>`. */
async function pushFresh(name: string, content: string | Buffer, args: string[]) {
  const setup = await erpSetup();
  const file = join(setup.dir, name);
  await writeFile(file, content);
  const run = await runCli(['push', file, ...args, '--config', setup.config], env());
  return { ...setup, file, run };
}

function germanFile(prefix: string): Buffer {
  const [s1, s2] = stores;
  const text = [
    'Artikelnummer;Filiale;Preis;Listenpreis;Bestand;Gültig ab;Filialname',
    `${prefix}-1;${s1};1,99;2,49;12;01.03.2026;Köln Hbf`,
    `${prefix}-2;${s1};1.234,50;;3;02.03.2026;Köln Hbf`,
    `${prefix}-3;${s2};abc;;;;Straße € 1`,
    `${prefix}-4;${s2};0,5;;;31.02.2026;München Süd`,
    '',
  ].join('\r\n');
  return iconv.encode(text, 'win1252');
}

function storeRecord(item: string) {
  return [...sandbox.control.world.productStore.table.rows()].find((r) => r.item_id === item);
}

describe('pricing-agent push', () => {
  it('--source: reads a Windows-1252 semicolon file with the source mapping, copies it, exits 3 with rejects', async () => {
    const { inbox, file, run } = await pushFresh('Preise.csv', germanFile('DE'), ['--source', 'erp']);
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(3);
    expect(run.stdout).toMatch(/Preise\.csv: done, some rows rejected \(source erp, product_store, bulk\)/);
    expect(run.stdout).toMatch(/rows: +4 read, 2 sent, 2 accepted, 2 rejected \(2 locally, 0 by the API\), 0 superseded/);
    const rejectsPath = /rejects: (.*)/.exec(run.stdout)?.[1] ?? '';
    expect(rejectsPath).toMatch(new RegExp(`^${inbox}/archive/\\d{4}-\\d{2}-\\d{2}/Preise\\.csv\\.rejects\\.csv$`));
    const rejects = (await readFile(rejectsPath, 'utf8')).split('\r\n');
    expect(rejects[0]).toBe('\uFEFFline;Artikelnummer;Filiale;Preis;Listenpreis;Bestand;Gültig ab;Filialname;field;code;message');
    expect(rejects[1]).toMatch(new RegExp(`^4;DE-3;${stores[1]};abc;;;;Straße € 1;current_price;`));
    expect(rejects[2]).toMatch(new RegExp(`^5;DE-4;${stores[1]};0,5;;;31.02.2026;München Süd;price_effective_date;`));
    expect(existsSync(file)).toBe(true); // copied, not moved
    expect(storeRecord('DE-1')).toMatchObject({ current_price: '1.99', regular_price: '2.49', stock_on_hand: 12, store_name: 'Köln Hbf', currency: 'EUR' });
    expect(storeRecord('DE-2')).toMatchObject({ current_price: '1234.50', price_effective_date: '2026-03-02' });
  });

  it('--source with a file in the inbox claims it there; --json prints one object', async () => {
    const { inbox, config } = await erpSetup();
    const file = join(inbox, 'in-place.csv');
    await writeFile(file, germanFile('INB'));
    const run = await runCli(['push', file, '--source', 'erp', '--config', config, '--json'], env());
    expect(run.code).toBe(3);
    const out = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({ outcome: 'done', exit_code: 3, source: 'erp', entity: 'product_store', resumed: [] });
    expect(out['rows']).toMatchObject({ read: 4, sent: 2, accepted: 2, rejected: 2, rejected_locally: 2, rejected_by_api: 0 });
    expect(existsSync(file)).toBe(false);
    expect(String(out['final_path'])).toMatch(new RegExp(`^${inbox}/archive/.*/in-place\\.csv$`));
  });

  it('says which source sent the same content, and that a mapping fix sends it again (issue 28 point 6)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pa-push-cli-'));
    // Without delta: a delta source compares every file row by row and skips none as a duplicate.
    const shop = (name: string, price: string) => ({ name, entity: 'product_store', path: `./inbox/${name}`, delta: false, columns: { current_price: price } });
    await Promise.all(['a', 'b'].map((name) => mkdir(join(dir, 'inbox', name), { recursive: true })));
    const file = join(dir, 'prices.csv');
    await writeFile(file, `item_id,store_id,Preis,Aktion\nCLI-M1,${stores[0]},2.50,1.99\n`);
    let config = await writeAgentConfig(dir, sandbox.url, [shop('a', 'Aktion'), shop('b', 'Aktion')]);
    expect((await runCli(['push', file, '--source', 'a', '--config', config], env())).code).toBe(0);

    const other = await runCli(['push', file, '--source', 'b', '--config', config], env());
    expect(other.code).toBe(0);
    expect(other.stdout).toMatch(/prices\.csv: skipped \(source b, product_store, bulk\): the same content was already sent by source a as prices\.csv \(file #\d+\); --force sends it again/);

    config = await writeAgentConfig(dir, sandbox.url, [shop('a', 'Preis'), shop('b', 'Aktion')]);
    const fixed = await runCli(['push', file, '--source', 'a', '--config', config], env());
    expect(fixed.code).toBe(0);
    expect(fixed.stdout).toMatch(/prices\.csv: done \(source a, product_store, bulk\); sent again: mapping changed since the last push \(file #\d+\)/);
    expect(storeRecord('CLI-M1')).toMatchObject({ current_price: '2.50' });
  });

  it('names merged and superseded rows on the outcome line: a till line keyed like another one is added to it, not lost (issue 28 point 1)', async () => {
    const till = 'transaction_id,item_id,transaction_timestamp,quantity,price\nT-SUP-1,A,2026-11-20T08:00:00Z,1,1.50\nT-SUP-1,A,2026-11-20T08:00:00Z,1,1.50\nT-SUP-2,B,2026-11-20T08:01:00Z,1,2.00\n';
    const { dir, config, run } = await pushFresh('till.csv', till, ['--entity', 'transactions']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/till\.csv: done, 1 row merged \(quantity added to another row with the same key\) \(entity transactions, bulk\)/);
    expect(run.stdout).toContain('rows:    3 read, 2 sent, 2 accepted, 0 rejected, 0 superseded, 1 merged');
    const sale = [...sandbox.control.world.transactions.table.rows()].find((r) => r.transaction_id === 'T-SUP-1');
    expect(sale).toMatchObject({ quantity: '2', price: '1.50' });
    // Store prices keep the last row (a correction, not a second event): the earlier row is superseded, and said so.
    const prices = join(dir, 'prices.csv');
    await writeFile(prices, `item_id,store_id,current_price\nSUP-P,${stores[0]},1.00\nSUP-P,${stores[0]},1.10\n`);
    const last = await runCli(['push', prices, '--entity', 'product_store', '--config', config], env());
    expect(last.code).toBe(0);
    expect(last.stdout).toMatch(/prices\.csv: done, 1 row superseded \(same key as another row\) \(entity product_store, bulk\)/);
  });

  it('--entity: API headers, folders under state.dir/push/<entity>, exit 0 when every row is accepted', async () => {
    const { dir, run } = await pushFresh('products.csv', 'item_id;sku;product_name;Farbe\nCLI-P1;S1;Äpfel;rot\nCLI-P2;S2;Birnen;grün\n', ['--entity', 'products']);
    expect(run.code).toBe(0);
    // "Farbe" is a custom column: the file goes as a CSV import, the one way the API document promises for them.
    expect(run.stdout).toMatch(/products\.csv: done \(entity products, import, job [0-9a-f-]{36}\)/);
    expect(run.stdout).toMatch(new RegExp(`report: +${dir}/state/push/products/archive/\\d{4}-\\d{2}-\\d{2}/products\\.csv\\.report\\.json`));
    expect(run.stdout).not.toMatch(/rejects:/);
    expect(sandbox.control.state({ keys: true }).products.keys).toEqual(expect.arrayContaining(['CLI-P1', 'CLI-P2']));
  });

  it('--dry-run reads, maps and validates, writes the rejects, counts superseded rows, and sends and claims nothing', async () => {
    const { dir, config } = await erpSetup();
    const [s1] = stores;
    const file = join(dir, 'dry.csv');
    const rows = ['Artikelnummer;Filiale;Preis', `D-1;${s1};1,00`, `D-2;${s1};x`, `D-1;${s1};1,10`, `D-3;${s1};2,00;zu viel`];
    await writeFile(file, iconv.encode(`${rows.join('\n')}\n`, 'win1252'));
    const requests = sandbox.control.state().requests.total;
    const rejectsPath = join(dir, 'out', 'dry.rejects.csv');
    const run = await runCli(['push', file, '--source', 'erp', '--dry-run', '--rejects', rejectsPath, '--config', config], env());
    expect(run.code).toBe(3);
    expect(run.stdout).toContain('nothing was sent');
    expect(run.stdout).toMatch(/rows: +4 read, 2 valid, 2 rejected, 1 superseded by another row with the same key/);
    expect(run.stdout).toContain('would send 1 of 4 rows; a full send (first file of the source)'); // product_store: delta by default
    expect(run.stdout).toContain(`rejects: ${rejectsPath}`);
    expect(await readFile(rejectsPath, 'utf8')).toBe(
      // The layout of a push's rejects file: the field beyond the header is kept, in extra_1.
      '\uFEFFline;Artikelnummer;Filiale;Preis;extra_1;field;code;message\r\n' +
        `3;D-2;${s1};x;;current_price;decimal_parsing;"""x"" is not a decimal"\r\n` +
        `5;D-3;${s1};2,00;zu viel;;field_count;the row has 4 fields, the header has 3\r\n`,
    );
    expect(sandbox.control.state().requests.total).toBe(requests);
    expect(existsSync(file)).toBe(true);
    expect(existsSync(join(dir, 'state', 'pricing-agent.db'))).toBe(false);
    expect(existsSync(join(dir, 'inbox', 'erp', 'processing'))).toBe(false);

    // --rejects naming the file itself (here through a link to it) replaced the export with its rejects: refused.
    const content = await readFile(file);
    await symlink(file, join(dir, 'link.csv'));
    const same = await runCli(['push', file, '--source', 'erp', '--dry-run', '--rejects', join(dir, 'link.csv'), '--config', config], env());
    expect(same.code).toBe(2);
    expect(same.stderr).toContain(`--rejects names the file being checked (${file})`);
    expect(await readFile(file)).toEqual(content);
    const folder = await runCli(['push', file, '--source', 'erp', '--dry-run', '--rejects', dir, '--config', config], env());
    expect({ code: folder.code, stderr: folder.stderr.trim() }).toEqual({ code: 2, stderr: `--rejects names a folder (${dir}): give a file name for the rejects CSV` });
    // A file that is not there: exit 2 with a sentence, as without --dry-run.
    const missing = await runCli(['push', join(dir, 'nope.csv'), '--source', 'erp', '--dry-run', '--config', config], env());
    expect({ code: missing.code, stderr: missing.stderr.trim() }).toEqual({ code: 2, stderr: `${join(dir, 'nope.csv')}: no such file` });
  });

  it('exits 4 for a file that fails (unclosed quote) and says where it went', async () => {
    const kaputt = `Artikelnummer;Filiale;Preis\nK-1;${stores[0]};1,00\n"K-2;${stores[0]};2,00\nK-3;${stores[0]};3,00\n`;
    const { inbox, run } = await pushFresh('kaputt.csv', kaputt, ['--source', 'erp']);
    expect(run.code).toBe(4);
    expect(run.stdout).toMatch(/kaputt\.csv: failed \(source erp, product_store, bulk\): UNCLOSED_QUOTE: .*line 3/);
    expect(run.stdout).toContain(`file:    ${inbox}/failed/kaputt.csv`);
  });

  it('a rejected key defers the file (exit 1, kept in processing/); the same command with the new key resumes it', async () => {
    const { dir, config } = await erpSetup();
    const file = join(dir, 'transactions.csv');
    await writeFile(file, 'transaction_id,item_id,transaction_timestamp\nK401-1,A,2026-11-20T08:00:00Z\nK401-2,B,2026-11-20T09:00:00Z\n');
    const oldKey = sandbox.apiKey;
    sandbox.control.rotateKey();
    const first = await runCli(['push', file, '--entity', 'transactions', '--config', config], { PRICING_API_KEY: oldKey });
    expect(first.code).toBe(1);
    expect(first.stdout).toMatch(/transactions\.csv: not finished \(entity transactions, bulk\): API_KEY_REJECTED: The API rejected the key/);
    const processing = join(dir, 'state', 'push', 'transactions', 'processing');
    expect((await readdir(processing)).filter((n) => !n.startsWith('.'))).toEqual(['1-transactions.csv']);

    const second = await runCli(['push', file, '--entity', 'transactions', '--config', config, '--json'], env());
    expect(second.code).toBe(0);
    const out = JSON.parse(second.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({ outcome: 'done', resumed: [], rows: { read: 2, sent: 2, accepted: 2, rejected: 0 } });
    expect(await readdir(processing)).toEqual([]);
    expect(sandbox.control.state({ keys: true }).transactions.keys).toEqual(expect.arrayContaining(['K401-1', 'K401-2']));
  });

  it('exits 2 for usage and config mistakes, a missing file included', async () => {
    const { dir, config } = await erpSetup();
    const file = join(dir, 'x.csv');
    await writeFile(file, 'item_id,sku\nX,X\n');
    const neither = await runCli(['push', file, '--config', config], env());
    expect(neither).toMatchObject({ code: 2, stderr: expect.stringContaining('exactly one of --source') as unknown });
    const unknown = await runCli(['push', file, '--source', 'nope', '--config', config], env());
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringContaining('no source named "nope" (sources in') as unknown });
    const entity = await runCli(['push', file, '--entity', 'variants', '--config', config], env());
    expect(entity).toMatchObject({ code: 2, stderr: expect.stringContaining('--entity must be one of') as unknown });
    const badConfig = join(dir, 'bad.yaml');
    await writeFile(badConfig, (await readFile(config, 'utf8')).replace('entity: product_store', 'entity: prices'));
    expect((await runCli(['push', file, '--source', 'erp', '--config', badConfig], env())).code).toBe(2);
    const missing = await runCli(['push', join(dir, 'none.csv'), '--entity', 'products', '--config', config], env());
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringContaining('none.csv: no such file') as unknown });
  });
});
