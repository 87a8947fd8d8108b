/**
 * The demo's summary for people: what happened, whether it checks out, and where to look next.
 */
import type { DemoSummary } from '../../demo/demo-summary.ts';
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { plural, table } from './status-table.ts';

/**
 * How to run the agent again, as a command to type: from a checkout its `./pricing-agent` launcher when
 * scripts/use-node.sh wrote one (it works in a new shell, whatever node is on PATH), else `node src/cli/main.ts`;
 * installed, `pricing-agent`. `exists` answers for a path.
 */
export function invokedAs(argv: readonly string[] = process.argv, cwd: string = process.cwd(), exists: (path: string) => boolean = existsSync): string {
  const script = argv[1] ?? '';
  if (!script.endsWith('.ts')) return 'pricing-agent';
  const launcher = join(dirname(dirname(dirname(script))), 'pricing-agent');
  const typed = (path: string) => {
    const rel = relative(cwd, path);
    return rel.startsWith('..') ? path : rel;
  };
  if (exists(launcher)) {
    const path = typed(launcher);
    return path.startsWith('/') ? path : `./${path}`;
  }
  return `node ${typed(script)}`;
}

/**
 * `command` is how the user runs the agent, for the commands to try next: `pricing-agent`, or from a checkout
 * `node src/cli/main.ts` (see invokedAs).
 */
export function demoText(s: DemoSummary, kept: boolean, command = 'pricing-agent'): string {
  const a = s.approvals;
  const lines = [
    `pricing-agent demo: ${s.ok ? 'everything checks out' : 'SOMETHING DID NOT CHECK OUT'} (${(s.duration_ms / 1000).toFixed(1)} s)`,
    '',
    'Files pushed to the API (sandbox)',
    ...table(
      ['SOURCE', 'FILE', 'STATUS', '#READ', '#ACCEPTED', '#REJECTED'],
      s.files.map((f) => [f.source, f.name, f.status, String(f.rows_read ?? '-'), String(f.rows_accepted ?? '-'), String(f.rows_rejected ?? '-')]),
      '  ',
    ),
    '',
    'Approved prices pulled into the outbox',
    `  ${a.stored} versions stored, ${a.acknowledged} acknowledged (${a.ack_pending} waiting, ${plural(a.conflicts, 'conflict')}) in ${plural(a.pull_pages, 'delivery page')};`,
    `  after the first pull the platform amended ${a.amended}, cancelled ${a.cancelled} and approved ${a.new_after_first_pull} more`,
    `  feed: ${plural(s.outbox.feed_rows, 'row')} (${plural(s.outbox.withdrawals, 'withdrawal')}); current_prices: ${plural(s.outbox.current_prices, 'row')}`,
    '',
    'Per-store price files',
    ...table(
      ['STORE', '#FILES', '#ROWS'],
      s.store_files.map((f) => [f.store, String(f.files), String(f.rows)]),
      '  ',
    ),
    '',
    'Checks',
    ...s.checks.map((c) => `  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`),
  ];
  if (kept) {
    const p = s.paths;
    lines.push(
      '',
      `Look around in ${s.dir}:`,
      `  reports:       ${p.reports.join('\n                 ')}`,
      `  rejects:       ${p.rejects.join('\n                 ') || '-'}`,
      `  outbox:        ${p.database}`,
      `                 ${p.example_query}`,
      `  store files:   ${p.store_files}/<store_id>/prices-<from_seq>-<to_seq>.csv`,
      `  agent log:     ${p.log}`,
      `  config:        ${p.config}`,
      `  then:          ${command} status --offline --config ${p.config}`,
      `                 ${command} files list --config ${p.config}`,
      `                 ${command} demo --serve     (the same demo, then its web console until Ctrl-C)`,
      `  remove it with: rm -r ${s.dir}`,
    );
  } else {
    lines.push('', `Removed ${s.dir} (--clean).`);
  }
  return `${lines.join('\n')}\n`;
}
