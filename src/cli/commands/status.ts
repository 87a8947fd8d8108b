/**
 * `pricing-agent status [--config F] [--json] [--offline]`: the agent at a glance, from the state database
 * (opened read-only: safe while the daemon runs), the inbox folders, one key check against the API and one question
 * to the daemon's /readyz. What is shown and how it is judged: src/status/status-report.ts.
 *
 * Exit codes: 0 shown; 1 the API rejected the key (401) or a daemon answered "not ready"; 2 a configuration
 * mistake. An unreachable API, a stopped daemon or a missing database are shown but exit 0.
 */
import { Command } from 'commander';
import { checkDaemon } from '../../status/daemon-probe.ts';
import { buildReport, gatherDatabaseParts, type KeyCheck } from '../../status/status-report.ts';
import { configOption, loadConfigForCommand } from './config.ts';
import { runCommand } from './errors.ts';
import { statusText } from './status-text.ts';

interface StatusOptions {
  readonly config: string;
  readonly json?: boolean;
  readonly offline?: boolean;
}

export function statusCommand(): Command {
  return new Command('status')
    .description('show the agent at a glance: inboxes, files today, last pull, outbox, mirrors, key, daemon')
    .addOption(configOption())
    .option('--json', 'print one JSON object (stable snake_case keys) instead of text')
    .option('--offline', 'do not call the API to check the key')
    .addHelpText(
      'after',
      '\nReads the state database read-only, so it is safe while `pricing-agent run` is running. The key is checked\n' +
        'with one GET /v1/auth/verify (skip with --offline); the daemon is asked at http://<http.host>:<http.port>/readyz.',
    )
    .action(
      runCommand(async (options: StatusOptions) => {
        const config = await loadConfigForCommand(options.config);
        const now = new Date();
        const skipped: KeyCheck = { state: 'skipped', base_url: config.api.base_url };
        const [parts, key, daemon] = await Promise.all([
          gatherDatabaseParts(config, now),
          // The HTTP client loads only for the key check: status --offline starts without it.
          options.offline === true ? Promise.resolve(skipped) : import('./status-key.ts').then(({ checkKey }) => checkKey(config)),
          checkDaemon(config),
        ]);
        const report = buildReport(config, now, parts, key, daemon);
        process.stdout.write(options.json === true ? `${JSON.stringify(report, null, 2)}\n` : statusText(report, now));
        return report.ok ? 0 : 1;
      }),
    );
}
