/**
 * Every command driven into every exit code of the one table (src/cli/commands/exit-table.ts), as child processes
 * against a sandbox in the test process, and docs/exit-codes.md held to the same table. A row added to the table
 * without a case here fails the first test; a command that exits otherwise than its row says fails its case.
 *
 * `state migrate` needs a PostgreSQL cluster: its rows are driven in test/cli/state-migrate.test.ts (0 and 1) and
 * here (2). `state backup` and `state restore` need a state of a previous release: test/cli/state-backup.test.ts.
 * A row that a command's own test file already drives as a child process and checks the code of is listed in
 * ELSEWHERE with that file rather than driven twice: each child costs about half a second of CPU.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_TABLE, type CommandName } from '../../src/cli/commands/exit-table.ts';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.ts';
import { databasePath, openSqlite } from '../../src/store/sqlite/open-sqlite.ts';
import { writeAgentConfig } from '../fixtures/push/push-fixtures.ts';
import { CLI_MAIN, runCli, type CliRun } from '../support/run-cli.ts';

let sandbox: SandboxHandle;
let dir: string;
let config: string;
let badConfig: string;
let noStateConfig: string;
let store: string;

const WRONG_KEY = 'svc_live_000000000000000000000000000000000000000000';
const TX_SOURCES = ['retry1', 'retry3', 'retry4', 'd0', 'd4'] as const;
const STORE_SOURCES = ['rel0', 'rel1', 'rel3', 'rel4', 'dry1'] as const;

beforeAll(async () => {
  sandbox = await startSandbox({ approvals: 5, largeGridRows: 0, jobPace: 'instant' });
  store = sandbox.control.state().stores[0] ?? '';
  dir = await mkdtemp(join(tmpdir(), 'pa-exit-codes-'));
  // A source per case that pushes (cases run at the same time, and a push first resumes its source's unfinished
  // files): one case never meets another's file.
  const sources = [
    ...TX_SOURCES.map((name) => ({ name, entity: 'transactions', path: `./inbox/${name}`, reject_threshold: 0.5 })),
    ...STORE_SOURCES.map((name) => ({ name, entity: 'product_store', path: `./inbox/${name}`, reject_threshold: 0.5 })),
  ];
  for (const s of sources) await mkdir(join(dir, s.path), { recursive: true });
  config = await writeAgentConfig(dir, sandbox.url, sources, { http: { port: 0 } });
  // The state exists before the cases start: they run at the same time, and two first runs creating it at once
  // can meet on its first migration ("database is locked"), which is not what any case is about.
  await (await openSqlite(databasePath(join(dir, 'state')))).close();
  badConfig = join(dir, 'bad.yaml');
  await writeFile(badConfig, (await readFile(config, 'utf8')).replace('entity: transactions', 'entity: prices'));
  noStateConfig = join(dir, 'no-state.yaml');
  await writeFile(noStateConfig, (await readFile(config, 'utf8')).replace('dir: ./state', 'dir: ./no-state'));
});
afterAll(() => sandbox.close());

const cli = (args: string[], key = sandbox.apiKey): Promise<CliRun> => runCli([...args, '--config', config], { PRICING_API_KEY: key });
const withBadConfig = (args: string[]): Promise<CliRun> => runCli([...args, '--config', badConfig], { PRICING_API_KEY: sandbox.apiKey });
/** The config with a state.dir where no agent has run yet. */
const withoutState = (args: string[]): Promise<CliRun> => runCli([...args, '--config', noStateConfig], { PRICING_API_KEY: sandbox.apiKey });

let seq = 0;
/** A file of its own in the test's folder (or in an inbox): names never repeat, so cases do not meet. */
async function file(text: string, where = dir): Promise<string> {
  seq += 1;
  const path = join(where, `f${seq}.csv`);
  await writeFile(path, text);
  return path;
}

const txCsv = (prefix: string, bad = false) =>
  `transaction_id,item_id,transaction_timestamp\n${prefix}-1,A,2026-11-20T08:00:00Z\n${prefix}-2,B,${bad ? 'yesterday' : '2026-11-20T09:00:00Z'}\n`;
const kaputt = () => `transaction_id,item_id,transaction_timestamp\n"K-1,A,2026-11-20T08:00:00Z\nK-2,B,2026-11-20T08:00:00Z\n`;
/** product_store rows for the delta source erp; `extra` lines are appended as they are. */
const storeCsv = (prefix: string, prices: readonly string[], extra: readonly string[] = []) =>
  `item_id,store_id,current_price\n${[...prices.map((p, i) => `${prefix}-${i},${store},${p}`), ...extra].join('\n')}\n`;
const DAY1 = ['1.00', '2.00', '3.00', '4.00', '5.00', '6.00', '7.00', '8.00', '9.00', '10.00'];

/** Pushes a day 1 to `source`, then drops a day 2 whose lost decimal point the brakes hold. Returns its name. */
async function heldFile(source: (typeof STORE_SOURCES)[number], extra: readonly string[] = []): Promise<string> {
  await succeeds(cli(['push', await file(storeCsv(source, DAY1)), '--source', source]));
  const day2 = await file(storeCsv(source, ['1.00', '2.00', '300', ...DAY1.slice(3)], extra), join(dir, 'inbox', source));
  const held = await cli(['push', day2, '--source', source]);
  expect(held.stdout).toContain('held by the brakes');
  return day2.slice(day2.lastIndexOf('/') + 1);
}

/** A file left in processing/ of `source` by a rejected key; returns its ledger id (processing/<id>-<name>). */
async function deferredFile(source: (typeof TX_SOURCES)[number], text: string): Promise<number> {
  const run = await cli(['push', await file(text), '--source', source, '--json'], WRONG_KEY);
  expect(run.code).toBe(1);
  const path = (JSON.parse(run.stdout) as { processing_path: string }).processing_path;
  return Number(/\/(\d+)-[^/]+$/.exec(path)?.[1]);
}

/** A long-running command as a child: waits for `ready` in its output, then sends SIGINT and returns the exit code. */
async function startAndStop(args: string[], ready: RegExp): Promise<number | null> {
  const child = spawn(process.execPath, [CLI_MAIN, ...args], { env: { ...process.env, PRICING_API_KEY: sandbox.apiKey }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = once(child, 'exit') as Promise<[number | null]>;
  await new Promise<void>((resolve, reject) => {
    const look = (c: Buffer) => {
      out += c.toString();
      if (ready.test(out)) resolve();
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    void exited.then(() => reject(new Error(`exited before it was ready:\n${out}`)));
  });
  child.kill('SIGINT');
  return (await exited)[0];
}

type Case = () => Promise<number | null>;
const code = (run: Promise<CliRun>) => run.then((r) => r.code);
/** Expects a run to exit 0, and shows what it printed when it did not. */
async function succeeds(run: Promise<CliRun>): Promise<void> {
  const { code: exit, stdout, stderr } = await run;
  expect(exit, `${stdout}\n${stderr}`).toBe(0);
}

/** How each command is driven into each of its codes. */
const CASES: { [C in CommandName]: Partial<Record<number, Case>> } = {
  'api clear-wait': { 0: () => code(cli(['api', 'clear-wait'])), 2: () => code(withBadConfig(['api', 'clear-wait'])) },
  check: {},
  'config validate': {},
  'config print': { 2: () => code(withBadConfig(['config', 'print'])) },
  // No temp folder to make its own in: the demo cannot run (a --dir it cannot use is a usage mistake: demo.test.ts).
  demo: { 1: () => code(runCli(['demo'], { TMPDIR: join(tmpdir(), 'no-such-folder') })) },
  'exports cancel': {
    1: () => code(cli(['exports', 'cancel', '00000000-0000-4000-8000-000000000000'])),
    2: () => code(withBadConfig(['exports', 'cancel', '00000000-0000-4000-8000-000000000000'])),
  },
  'files list': {},
  'files show': { 2: () => code(withBadConfig(['files', 'show', '1'])) },
  'files retry': {
    1: async () => code(cli(['files', 'retry', String(await deferredFile('retry1', txCsv('RETRY1')))], WRONG_KEY)),
    3: async () => code(cli(['files', 'retry', String(await deferredFile('retry3', txCsv('RETRY3', true)))])),
    4: async () => {
      // One row to send (the rejected key defers it), three rejected: more than the source's reject_threshold (0.5).
      const bad = [1, 2, 3].map((i) => `R4-${i},A,yesterday`).join('\n');
      const id = await deferredFile('retry4', `transaction_id,item_id,transaction_timestamp\nR4-0,A,2026-11-20T08:00:00Z\n${bad}\n`);
      return code(cli(['files', 'retry', String(id)]));
    },
  },
  'files release': {
    0: async () => code(cli(['files', 'release', await heldFile('rel0')])),
    1: async () => code(cli(['files', 'release', await heldFile('rel1')], WRONG_KEY)),
    2: () => code(cli(['files', 'release', 'no-such-file.csv'])),
    3: async () => code(cli(['files', 'release', await heldFile('rel3', [`REL3-X,${store},abc`])])),
    4: async () => {
      // More rows rejected than the source's reject_threshold (0.5): the file fails.
      const bad = Array.from({ length: 11 }, (_, i) => `REL4-X${i},${store},abc`);
      return code(cli(['files', 'release', await heldFile('rel4', bad)]));
    },
  },
  'jobs show': {
    1: () => code(cli(['jobs', 'show', '00000000-0000-4000-8000-000000000000'])),
    2: () => code(withBadConfig(['jobs', 'show', '00000000-0000-4000-8000-000000000000'])),
  },
  'outbox stats': { 0: () => code(cli(['outbox', 'stats'])), 1: () => code(withoutState(['outbox', 'stats'])), 2: () => code(withBadConfig(['outbox', 'stats'])) },
  'outbox consumers': {
    0: () => code(cli(['outbox', 'consumers'])),
    1: () => code(withoutState(['outbox', 'consumers'])),
    2: () => code(withBadConfig(['outbox', 'consumers'])),
  },
  'outbox ack': { 2: () => code(cli(['outbox', 'ack', '--consumer', 'pos-1', '--seq', '999999'])) }, // beyond the feed
  'outbox export': {
    0: () => code(cli(['outbox', 'export', '--dir', join(dir, 'exports')])),
    1: async () => code(cli(['outbox', 'export', '--dir', join(await file('not a folder'), 'exports')])),
    2: () => code(cli(['outbox', 'export'])), // no outbox.exports in the config, no --dir
  },
  pull: { 1: () => code(cli(['pull'], WRONG_KEY)), 2: () => code(withBadConfig(['pull'])) },
  push: {},
  'push --dry-run': {
    0: async () => code(cli(['push', await file(txCsv('D0')), '--source', 'd0', '--dry-run'])),
    1: async () => {
      await succeeds(cli(['push', await file(storeCsv('dry1', DAY1)), '--source', 'dry1']));
      return code(cli(['push', await file(storeCsv('dry1', ['1.00', '2.00', '300', ...DAY1.slice(3)])), '--source', 'dry1', '--dry-run']));
    },
    2: async () => code(cli(['push', await file(txCsv('D2')), '--source', 'no-such-source', '--dry-run'])),
    4: async () => code(cli(['push', await file(kaputt()), '--source', 'd4', '--dry-run'])),
  },
  run: {
    0: () => startAndStop(['run', '--config', config], /"msg":"running"|running/),
    1: async () => {
      // state.dir is a file: the agent cannot open its state.
      const blocked = await writeAgentConfig(join(dir, 'run1'), sandbox.url, [], { state: { dir: await file('not a folder') } });
      return code(runCli(['run', '--config', blocked], { PRICING_API_KEY: sandbox.apiKey }));
    },
    2: () => code(withBadConfig(['run'])),
  },
  sandbox: {
    0: () => startAndStop(['sandbox', '--port', '0'], /serving on/),
    1: async () => {
      const taken = createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      const port = (taken.address() as { port: number }).port;
      try {
        const run = await runCli(['sandbox', '--port', String(port)]);
        // One sentence naming the option, not Node's `listen EADDRINUSE` (src/listen-error.ts).
        expect(run.stderr.trim()).toBe(`127.0.0.1:${port} is already in use by another program: stop it, or set --port to another port`);
        return run.code;
      } finally {
        taken.close();
      }
    },
    2: () => code(runCli(['sandbox', '--dialect', 'nope'])),
  },
  'sources suggest': {
    0: async () => code(runCli(['sources', 'suggest', await file(txCsv('S0'))])),
    1: async () => code(runCli(['sources', 'suggest', await file(kaputt())])),
    2: async () => code(runCli(['sources', 'suggest', await file(txCsv('S2')), '--preview', '3'])),
  },
  'state backup': { 2: () => code(withBadConfig(['state', 'backup'])) },
  'state restore': { 2: () => code(withBadConfig(['state', 'restore', 'backup.db'])) },
  'state migrate': { 2: () => code(withBadConfig(['state', 'migrate', '--to', 'postgres'])) },
  status: {},
};

/** Rows driven elsewhere, as child processes whose exit code is checked, with the file that drives them. */
const CHECK = 'test/cli/check.test.ts';
const CONFIG = 'test/config/cli-config.test.ts';
const DEMO = 'test/cli/demo.test.ts';
const FILES = 'test/cli/files.test.ts';
const PULL = 'test/pull/cli.test.ts';
const PUSH = 'test/integration/push-cli.test.ts';
const STATUS = 'test/cli/status.test.ts';
const ELSEWHERE: Partial<Record<CommandName, Record<number, string>>> = {
  check: { 0: CHECK, 1: CHECK, 2: CHECK },
  'config validate': { 0: CONFIG, 2: CONFIG },
  'config print': { 0: CONFIG },
  demo: { 0: DEMO, 2: DEMO },
  'exports cancel': { 0: PULL },
  'files list': { 0: FILES, 2: FILES },
  'files show': { 0: FILES, 1: FILES },
  'files retry': { 0: FILES, 2: FILES },
  'jobs show': { 0: PULL },
  'outbox ack': { 0: PULL },
  pull: { 0: PULL },
  push: { 0: PUSH, 1: PUSH, 2: PUSH, 3: PUSH, 4: PUSH },
  'push --dry-run': { 3: PUSH },
  status: { 0: STATUS, 1: STATUS, 2: STATUS },
  'state backup': { 0: 'test/cli/state-backup.test.ts', 1: 'test/cli/state-backup.test.ts' },
  'state restore': { 0: 'test/cli/state-backup.test.ts', 1: 'test/cli/state-backup.test.ts' },
  'state migrate': { 0: 'test/cli/state-migrate.test.ts', 1: 'test/cli/state-migrate.test.ts' },
};

const rows = Object.entries(EXIT_TABLE).flatMap(([command, list]) => list.map(([exit, meaning]) => ({ command: command as CommandName, exit, meaning })));

it('every row of the table has a case, and nothing else does', () => {
  const missing = rows.filter((r) => CASES[r.command][r.exit] === undefined && ELSEWHERE[r.command]?.[r.exit] === undefined);
  expect(missing.map((r) => `${r.command} ${r.exit}`)).toEqual([]);
  const extra = Object.entries(CASES).flatMap(([command, cases]) =>
    Object.keys(cases).filter((exit) => !rows.some((r) => r.command === command && r.exit === Number(exit))).map((exit) => `${command} ${exit}`),
  );
  expect(extra).toEqual([]);
});

it('every row driven elsewhere is a row of the table, not driven here too, in a file that runs that command', async () => {
  const problems: string[] = [];
  for (const [command, codes] of Object.entries(ELSEWHERE) as [CommandName, Record<number, string>][]) {
    for (const [exit, path] of Object.entries(codes)) {
      if (!rows.some((r) => r.command === command && r.exit === Number(exit))) problems.push(`${command} ${exit}: not a row`);
      if (CASES[command][Number(exit)] !== undefined) problems.push(`${command} ${exit}: driven here too`);
      // The command's words as the file passes them to the child (['files', 'show', ...] or cli('files', 'show', ...)).
      const text = await readFile(new URL(`../../${path}`, import.meta.url), 'utf8');
      for (const word of command.split(' ')) if (!text.includes(`'${word}'`)) problems.push(`${command} ${exit}: ${path} never passes '${word}'`);
    }
  }
  expect(problems).toEqual([]);
});

it('docs/exit-codes.md holds the same table', async () => {
  const doc = await readFile(new URL('../../docs/exit-codes.md', import.meta.url), 'utf8');
  const inDoc = [...doc.matchAll(/^\| `pricing-agent ([^`]+)` \| (\d) \| (.+) \|$/gm)].map((m) => `${m[1]} ${m[2]} ${m[3]}`);
  expect(inDoc).toEqual(rows.map((r) => `${r.command} ${r.exit} ${r.meaning}`));
});

describe.concurrent('each command exits as its row says', { timeout: 120_000 }, () => {
  for (const r of rows) {
    const drive = CASES[r.command][r.exit];
    if (drive === undefined) continue;
    it(`${r.command}: ${r.exit} (${r.meaning})`, async () => {
      expect(await drive()).toBe(r.exit);
    });
  }
});
