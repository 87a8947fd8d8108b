/**
 * The demo's summary for people: what happened, whether it checks out, and where to look next.
 */
import type { DemoSummary } from '../../demo/demo-summary.ts';
import { relative } from 'node:path';
import { plural, table } from './status-table.ts';

/** How this process was started, as a command to type: `node src/cli/main.ts` from a checkout, else `pricing-agent`. */
export function invokedAs(argv: readonly string[] = process.argv, cwd: string = process.cwd()): string {
  const script = argv[1] ?? '';
  if (!script.endsWith('.ts')) return 'pricing-agent';
  const path = relative(cwd, script);
  return `node ${path.startsWith('..') ? script : path}`;
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
