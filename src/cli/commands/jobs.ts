/**
 * `pricing-agent jobs show <job_id>`: the platform's record of an asynchronous job (an import), readable or as
 * JSON. Fields beyond the spec's (finished_at, row counts, errors) are shown when the API sends them.
 */
import { Command } from 'commander';
import { connectApi } from '../../api-from-config.ts';
import type { Job } from '../../api/schemas/index.ts';
import { createLogger } from '../../log.ts';
import { configOption, loadConfigForCommand } from './config.ts';
import { runCommand } from './errors.ts';

interface JobsOptions {
  readonly config: string;
  readonly json?: boolean;
}

const MAX_ERRORS_SHOWN = 10;

/** The job as aligned `key: value` lines, then its first row errors. */
export function describeJob(job: Job): string {
  const lines: [string, string][] = [
    ['job_id', job.job_id],
    ['job_type', job.job_type],
    ['status', job.status],
    ['progress', `${job.progress} %`],
    ['created_at', job.created_at],
    ['started_at', job.started_at ?? '-'],
  ];
  if (job.finished_at != null) lines.push(['finished_at', job.finished_at]);
  if (job.rows_total != null) {
    lines.push(['rows', `${job.rows_total} total, ${job.rows_ok ?? 0} ok, ${job.rows_failed ?? 0} failed`]);
  }
  if (job.error != null) lines.push(['error', job.error]);
  let text = lines.map(([key, value]) => `${`${key}:`.padEnd(13)}${value}\n`).join('');
  const errors = job.errors ?? [];
  for (const e of errors.slice(0, MAX_ERRORS_SHOWN)) text += `  line ${e.line}: ${e.code}: ${e.message}\n`;
  if (errors.length > MAX_ERRORS_SHOWN) text += `  ... and ${errors.length - MAX_ERRORS_SHOWN} more (--json shows all)\n`;
  return text;
}

export function jobsCommand(): Command {
  const command = new Command('jobs').description('asynchronous jobs on the platform (imports)');
  command
    .command('show')
    .description('print a job: status, progress, times, errors')
    .argument('<job_id>', 'the job id (a UUID)')
    .addOption(configOption())
    .option('--json', 'print the job as JSON')
    .action(
      runCommand(async (jobId: string, options: JobsOptions) => {
        const config = await loadConfigForCommand(options.config);
        const api = connectApi(config.api, createLogger({ level: 'warn', destination: 2 }));
        try {
          const job = await api.client.jobs.get(jobId);
          process.stdout.write(options.json === true ? `${JSON.stringify(job)}\n` : describeJob(job));
        } finally {
          await api.close();
        }
      }),
    );
  return command;
}
