/**
 * `pricing-agent check`: loads the config, verifies the key with GET /v1/auth/verify, and prints who the key
 * belongs to. One attempt, no retries: it reports the state now, and a failure is one sentence of what is wrong
 * and what to do (exit 1; a config mistake exits 2).
 */
import { Command } from 'commander';
import { connectApi } from '../../api-from-config.ts';
import { createLogger } from '../../log.ts';
import { configOption, loadConfigForCommand } from './config.ts';
import { runCommand } from './errors.ts';
import { explainApiError } from './explain-api-error.ts';

interface CheckOptions {
  readonly config: string;
  readonly json?: boolean;
}

export function checkCommand(): Command {
  return new Command('check')
    .description('verify the configuration and the API key against the API (GET /v1/auth/verify)')
    .addOption(configOption())
    .option('--json', 'print the result as JSON')
    .action(
      runCommand(async (options: CheckOptions) => {
        const config = await loadConfigForCommand(options.config);
        // check prints its own one-sentence result; the client's log lines would only repeat it.
        const logger = createLogger({ level: 'fatal', destination: 2 });
        const api = connectApi(config.api, logger, { maxAttempts: 1 });
        try {
          const result = await api.client.auth.verify();
          const out = { ok: true, base_url: config.api.base_url, user_id: result.user_id, api_key_id: result.api_key_id };
          if (options.json) process.stdout.write(`${JSON.stringify(out)}\n`);
          else process.stdout.write(`API:        ${out.base_url}\nuser_id:    ${out.user_id}\napi_key_id: ${out.api_key_id}\nThe key works.\n`);
          return 0;
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
        }
      }),
    );
}
