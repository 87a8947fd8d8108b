/**
 * What a one-shot command needs to push a file in its own process (`push`, `files retry`): the API client, the state
 * database, a logger. The logger writes to stderr and only at log.level debug or trace: a person at a terminal reads
 * the command's summary, not the agent's log lines (they say the same at info).
 */
import { connectApi, pacingOf } from '../../api-from-config.ts';
import type { TransportHooks } from '../../api/transport.ts';
import { systemClock } from '../../clock.ts';
import type { Config } from '../../config/index.ts';
import { createLogger, type Logger } from '../../log.ts';
import { openStateDb } from '../../store/open-state-db.ts';
import type { ImportSendContext } from '../send/import-send.ts';
import type { PushDeps } from '../file/push-file.ts';

/** The logger of a one-shot command: stderr, silent unless log.level is debug or trace. */
export function oneShotLogger(config: Config): Logger {
  const debug = config.log.level === 'debug' || config.log.level === 'trace';
  return createLogger({ level: debug ? config.log.level : 'fatal', destination: 2 });
}

export interface OneShotOptions {
  readonly logger: Logger;
  /** API retries, rate limits, a rejected key: for the command's progress notes. */
  readonly hooks?: TransportHooks;
  /** Aborted on Ctrl-C: the batches in flight are answered and committed, then the push stops. */
  readonly signal?: AbortSignal;
  readonly onProgress?: PushDeps['onProgress'];
  /** Every poll of an import job (processClaimed hands its deps on to sendImport). */
  readonly onPoll?: ImportSendContext['onPoll'];
}

export interface OneShot {
  readonly deps: PushDeps & Pick<ImportSendContext, 'onPoll'>;
  close(): Promise<void>;
}

export async function openOneShot(config: Config, options: OneShotOptions): Promise<OneShot> {
  const db = await openStateDb(config.state);
  // The Retry-After window is shared with the daemon and every other command through the state database.
  const api = connectApi(config.api, options.logger, { pacing: pacingOf(db, options.logger), ...(options.hooks ? { hooks: options.hooks } : {}) });
  return {
    deps: {
      db,
      client: api.client,
      clock: systemClock,
      logger: options.logger,
      maxInFlight: config.api.max_connections,
      signal: options.signal,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.onPoll ? { onPoll: options.onPoll } : {}),
    },
    async close() {
      await api.close();
      await db.close();
    },
  };
}
