/**
 * `pricing-agent exports cancel <export_id>`: cancels a transaction export on the platform and prints its status
 * object (a queued export becomes cancelled, a running one cancelling). The only export operation the API offers.
 */
import { Command } from 'commander';
import { connectApiWithPacing } from '../../api-from-config.ts';
import type { ExportStatus } from '../../api/schemas/index.ts';
import { createLogger } from '../../log.ts';
import { configOption, loadConfigForCommand } from './config.ts';
import { runCommand } from './errors.ts';
import { uuidArgument } from './arguments.ts';

interface ExportsOptions {
  readonly config: string;
  readonly json?: boolean;
}

/** The status object as aligned `key: value` lines; `-` for null. */
export function describeExportStatus(status: ExportStatus): string {
  const total = status.total_rows === null ? 'unknown' : String(status.total_rows);
  const lines: [string, string][] = [
    ['export_id', status.export_id],
    ['job_id', status.job_id],
    ['status', status.status],
    ['rows_written', `${status.rows_written} of ${total}`],
    ['expires_at', status.expires_at],
    ['error', status.error ?? '-'],
  ];
  return lines.map(([key, value]) => `${`${key}:`.padEnd(14)}${value}\n`).join('');
}

export function exportsCommand(): Command {
  const command = new Command('exports').description('transaction exports on the platform');
  command
    .command('cancel')
    .description('cancel a transaction export and print its status')
    .argument('<export_id>', 'the export id (a UUID)', uuidArgument)
    .addOption(configOption())
    .option('--json', 'print the status object as JSON')
    .action(
      runCommand(async (exportId: string, options: ExportsOptions) => {
        const config = await loadConfigForCommand(options.config);
        const api = await connectApiWithPacing(config, createLogger({ level: 'warn', destination: 2 }));
        try {
          const status = await api.client.transactionExports.cancel(exportId);
          process.stdout.write(options.json === true ? `${JSON.stringify(status)}\n` : describeExportStatus(status));
        } finally {
          await api.close();
        }
      }),
    );
  return command;
}
