/**
 * `npm run test:ha-servers -- [--rows N] [--keep]`: docs/ha.md followed on two servers made of network namespaces
 * (walkthrough.ts). Prints one line per check; exits 0 when every check passed, 1 when one failed (the run's folder,
 * with both servers' logs, is then kept), 2 when it cannot run here (not root, no `ip`) or for bad arguments.
 * About 2 minutes. Not part of `npm test`: it needs root, and it changes the machine's network while it runs (a
 * bridge `pa-servers` on 10.231.0.1/24, namespaces backoffice-a and backoffice-b, /etc/netns), removed at the end.
 */
import { parseArgs } from 'node:util';
import { serversUnavailable } from './netns.ts';
import { walkthrough } from './walkthrough.ts';

function main(): number {
  let rows = 20_000;
  let keep = false;
  try {
    const { values } = parseArgs({ args: process.argv.slice(2), options: { rows: { type: 'string' }, keep: { type: 'boolean' } } });
    if (values.rows !== undefined) {
      rows = Number(values.rows);
      if (!Number.isInteger(rows) || rows < 1_000) throw new Error(`--rows must be a whole number >= 1000 (got ${values.rows})`);
    }
    keep = values.keep ?? false;
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  const unavailable = serversUnavailable();
  if (unavailable !== null) {
    console.error(`test:ha-servers cannot run here: ${unavailable}`);
    return 2;
  }
  void walkthrough({ rows, keep }).then((result) => {
    let step = '';
    for (const c of result.checks) {
      if (c.step !== step) console.log(`\n${(step = c.step)}`);
      console.log(`  ${c.ok ? 'ok  ' : 'FAIL'} ${c.what}${c.detail === '' ? '' : ` (${c.detail})`}`);
    }
    if (result.aborted !== null) console.log(`\nABORTED at ${result.aborted}`);
    const failed = result.aborted !== null || result.checks.some((c) => !c.ok);
    console.log(`\ntest:ha-servers ${failed ? 'FAILED' : 'passed'}: ${result.checks.filter((c) => c.ok).length} of ${result.checks.length} checks${failed || keep ? `; folder ${result.dir}` : ''}\n`);
    process.exitCode = failed ? 1 : 0;
  });
  return 0;
}

process.exitCode = main();
