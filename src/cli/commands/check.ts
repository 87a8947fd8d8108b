/**
 * `pricing-agent check [--deep] [--json] [--no-retry]`: loads the config, verifies the key with GET
 * /v1/auth/verify, and prints who the key belongs to. The request follows the document's retry rule for an
 * idempotent GET (5xx and transport errors: up to 5 attempts, backoff from 1 s) and honours a Retry-After window
 * any process of the agent was given, saying on stderr what it waits for; `--no-retry` asks once. A window longer
 * than CHECK_MAX_WAIT_MS is not waited for: check says until when and why, and exits 1 (issue 27, point 2). A failure is one
 * sentence of what is wrong and what to do (exit 1; a config mistake exits 2).
 *
 * `--deep` then asks the read-only questions of src/api/deep-check.ts and prints what holds, what differs and what
 * the agent does about it; it exits 1 only when something differs that the agent cannot work around.
 */
import { Command } from 'commander';
import { connectApi, openPacing } from '../../api-from-config.ts';
import { runDeepCheck, type Finding } from '../../api/deep-check.ts';
import type { TransportHooks } from '../../api/transport.ts';
import { RETRY_MAX_ATTEMPTS } from '../../api/schemas/index.ts';
import type { Config } from '../../config/index.ts';
import { createLogger } from '../../log.ts';
import { recentImportJobIds } from '../../store/api-state.ts';
import { openStateDb } from '../../store/open-state-db.ts';
import { configOption, loadConfigForCommand } from './config.ts';
import { runCommand } from './errors.ts';
import { explainApiError } from '../../api/explain-error.ts';
import { describeWindow } from '../../api/rate-gate.ts';

/** The longest Retry-After window check waits for; a longer one is said, not waited for. */
export const CHECK_MAX_WAIT_MS = 60 * 1000; // 1 min

interface CheckOptions {
  readonly config: string;
  readonly json?: boolean;
  readonly deep?: boolean;
  readonly retry: boolean;
}

/** What the command tells the terminal while the client waits (stderr: stdout stays the result). */
function waitNotes(maxAttempts: number): TransportHooks {
  const say = (text: string) => process.stderr.write(`check: ${text}\n`);
  return {
    onRetry: (e) =>
      say(`${e.reason}; trying again in ${(e.delayMs / 1000).toFixed(1)} s (attempt ${e.attempt + 1} of ${maxAttempts}, the API's retry rule)`),
    // Said before the gate decides: a window longer than CHECK_MAX_WAIT_MS is then reported, not waited for.
    onRetryAfter: (e) => say(`the API asked to wait (${e.status} with Retry-After) until ${new Date(e.untilMs).toISOString()}`),
  };
}

async function jobIdsOf(config: Config): Promise<string[]> {
  try {
    const db = await openStateDb(config.state, { readonly: true });
    try {
      return await recentImportJobIds(db, 3);
    } finally {
      await db.close();
    }
  } catch {
    return []; // no state database yet: no earlier jobs to read back
  }
}

function findingsText(findings: readonly Finding[]): string {
  const mark = { holds: 'holds  ', differs: 'DIFFERS', fails: 'FAILS  ', skipped: 'skipped' } as const;
  return findings
    .map((f) => `${mark[f.result]}  ${f.area}: ${f.assumption}\n           ${f.observed}${f.action === '' ? '' : `\n           the agent: ${f.action}`}\n`)
    .join('');
}

export function checkCommand(): Command {
  return new Command('check')
    .description('verify the configuration and the API key against the API (GET /v1/auth/verify)')
    .addOption(configOption())
    .option('--json', 'print the result as JSON')
    .option('--deep', 'also ask the API read-only questions about every assumption the agent makes, and say what differs')
    .option('--no-retry', 'ask once, without the retries of the API\'s retry rule')
    .addHelpText('after', '\nWaits (retries, a Retry-After) are told on stderr.')
    .action(
      runCommand(async (options: CheckOptions) => {
        const config = await loadConfigForCommand(options.config);
        // check prints its own one-sentence result; the client's log lines would only repeat it.
        const logger = createLogger({ level: 'fatal', destination: 2 });
        const maxAttempts = options.retry ? RETRY_MAX_ATTEMPTS : 1;
        const shared = await openPacing(config, logger);
        const api = connectApi(config.api, logger, {
          maxAttempts,
          maxGateWaitMs: CHECK_MAX_WAIT_MS,
          hooks: waitNotes(maxAttempts),
          ...(shared.pacing ? { pacing: shared.pacing } : {}),
        });
        try {
          const window = await api.client.transport.refreshWaitWindow();
          const wait = window === null ? 0 : window.untilMs - Date.now();
          if (window !== null && wait > 0 && wait <= CHECK_MAX_WAIT_MS) {
            process.stderr.write(`check: waiting ${Math.ceil(wait / 1000)} s: the API asked the agent to wait (Retry-After) ${describeWindow(window)}\n`);
          }
          const result = await api.client.auth.verify();
          const out = { ok: true, base_url: config.api.base_url, user_id: result.user_id, api_key_id: result.api_key_id };
          if (options.deep !== true) {
            if (options.json) process.stdout.write(`${JSON.stringify(out)}\n`);
            else process.stdout.write(`API:        ${out.base_url}\nuser_id:    ${out.user_id}\napi_key_id: ${out.api_key_id}\nThe key works.\n`);
            return 0;
          }
          const findings = await runDeepCheck(api.client, { jobIds: await jobIdsOf(config) });
          const failing = findings.filter((f) => f.result === 'fails').length;
          const differing = findings.filter((f) => f.result === 'differs').length;
          if (options.json) process.stdout.write(`${JSON.stringify({ ...out, ok: failing === 0, findings })}\n`);
          else {
            process.stdout.write(`API:        ${out.base_url}\nuser_id:    ${out.user_id}\napi_key_id: ${out.api_key_id}\n\n${findingsText(findings)}\n`);
            process.stdout.write(
              failing > 0
                ? `${failing} assumption(s) fail: the agent cannot work with this API as it answers now.\n`
                : `The agent works with this API${differing > 0 ? ` (${differing} difference(s) it works around)` : ''}.\n`,
            );
          }
          return failing > 0 ? 1 : 0;
        } catch (error) {
          const message = explainApiError(error, config.api.base_url);
          if (options.json) {
            const code = (error as { code?: unknown }).code;
            process.stdout.write(`${JSON.stringify({ ok: false, base_url: config.api.base_url, error: { code, message } })}\n`);
          } else {
            process.stderr.write(`${message}\n`);
          }
          return 1;
        } finally {
          await api.close();
          await shared.close();
        }
      }),
    );
}
