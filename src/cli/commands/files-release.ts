/**
 * `files release NAME`: src/ingest/operations/release.ts moves the held file back and records the release; this file asks
 * whether a daemon will send it, or pushes it now, and says what happened.
 */
import type { Config } from '../../config/index.ts';
import { EXIT_OK } from './exit-codes.ts';
import { releaseFile } from '../../ingest/operations/release.ts';
import { exitCodeOfResult } from './exit-table.ts';
import { runPush } from '../../ingest/operations/one-shot-push.ts';
import { oneShotLogger, openOneShot } from '../../ingest/operations/one-shot-deps.ts';
import { resolveTarget } from '../../ingest/operations/push-target.ts';
import { checkDaemon } from '../../status/daemon-probe.ts';
import { resumedText } from './files-text.ts';

export async function releaseCommand(config: Config, name: string, source: string | undefined, json: boolean): Promise<number> {
  const daemon = await checkDaemon(config);
  const released = await releaseFile(config, name, source);
  const { file, to } = released;
  if (daemon.state === 'ready' || daemon.state === 'not_ready') {
    if (json) process.stdout.write(`${JSON.stringify({ id: file.file_id, action: 'released', to, daemon: daemon.state })}\n`);
    else process.stdout.write(`#${file.file_id} ${file.name}: released and moved back to ${to}\n  the daemon sends it without the brakes\n`);
    return EXIT_OK;
  }
  // No daemon: pushed now, as `push FILE --source NAME` would (the release lets it past the brakes).
  const target = resolveTarget(config, '', { source: file.source });
  const oneShot = await openOneShot(config, { logger: oneShotLogger(config) });
  try {
    const { main } = await runPush(oneShot.deps, target, to, {});
    if (json) process.stdout.write(`${JSON.stringify({ id: file.file_id, action: 'released', to, pushed: main.outcome })}\n`);
    else process.stdout.write(`#${file.file_id} ${file.name}: released; no daemon answers, so it was pushed now:\n${resumedText(main)}`);
    return exitCodeOfResult(main);
  } finally {
    await oneShot.close();
  }
}
