/**
 * `pricing-agent jobs show <job_id>`: the platform's record of an asynchronous job (an import), readable or as
 * JSON. Fields beyond the spec's (finished_at, row counts, errors) are shown when the API sends them.
 */
import { Command } from 'commander';
import { connectApiWithPacing } from '../../api-from-config.ts';
import type { Job } from '../../api/schemas/index.ts';
import { uuidArgument } from './arguments.ts';
import { createLogger } from '../../log.ts';
import { configOption, loadConfigForCommand } from './config.ts';
import { runCommand } from './errors.ts';

interface JobsOptions {
  readonly config: string;
  readonly json?: boolean;
}

const MAX_ERRORS_SHOWN = 10;

/** The job as aligned `key: value` lines, then the refused rows it names (whatever shape the server gives them). */
export function describeJob(job: Job): string {
  const lines: [string, string][] = [
    ['job_id', job.job_id],
    ['job_type', job.job_type ?? '-'],
    ['status', job.phase === job.status || job.phase === 'unknown' ? job.status : `${job.status} (${job.phase})`],
    ['progress', job.progress == null ? '-' : `${job.progress} %`],
    ['created_at', job.created_at ?? '-'],
    ['started_at', job.started_at ?? '-'],
  ];
  if (job.finished_at != null) lines.push(['finished_at', job.finished_at]);
  if (job.rows_total != null) {
    lines.push(['rows', `${job.rows_total} total, ${job.rows_ok ?? 0} ok, ${job.rows_failed ?? 0} failed`]);
  }
  const detail = job.detail;
  if (detail.kind !== 'none' && detail.message !== null) lines.push(['error', detail.message]);
  if (detail.kind === 'counts' || detail.kind === 'sample') lines.push(['failed', `${detail.failed} row(s)`]);
  let text = lines.map(([key, value]) => `${`${key}:`.padEnd(13)}${value}\n`).join('');
  if (detail.kind === 'list' || detail.kind === 'sample') {
    for (const e of detail.rows.slice(0, MAX_ERRORS_SHOWN)) {
      text += `  line ${e.line ?? '?'} of the file sent: ${e.code === null ? '' : `${e.code}: `}${e.message}\n`;
    }
    if (detail.rows.length > MAX_ERRORS_SHOWN) text += `  ... and ${detail.rows.length - MAX_ERRORS_SHOWN} more (--json shows all)\n`;
  } else if (job.phase === 'failed' && detail.kind === 'none') {
    text += '  the server gave no detail of what failed\n';
  }
  return text;
}

export function jobsCommand(): Command {
  const command = new Command('jobs').description('asynchronous jobs on the platform (imports)');
  command
    .command('show')
    .description('print a job: status, progress, times, errors')
    .argument('<job_id>', 'the job id (a UUID)', uuidArgument)
    .addOption(configOption())
    .option('--json', 'print the job as JSON')
    .action(
      runCommand(async (jobId: string, options: JobsOptions) => {
        const config = await loadConfigForCommand(options.config);
        const api = await connectApiWithPacing(config, createLogger({ level: 'warn', destination: 2 }));
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
