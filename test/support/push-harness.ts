/**
 * The push pipeline wired to a real sandbox over HTTP and a real SQLite file in a temp dir: what the integration
 * tests of push build on.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { ApiClient } from '../../src/api/client.ts';
import type { Entity } from '../../src/api/schemas/index.ts';
import { SourceSchema } from '../../src/config/source-schema.ts';
import { pushFile, type FileResult, type PushDeps, type PushOptions, type PushSource } from '../../src/ingest/file/push-file.ts';
import { sourceDelta } from '../../src/ingest/delta/source-delta.ts';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.ts';
import { ManualClock, drive } from './manual-clock.ts';
import { openForFile } from './open-for-file.ts';
import { openTestDb } from './state-db.ts';
import type { StateDb } from '../../src/store/state-db.ts';
import { systemClock, type Clock } from '../../src/clock.ts';
import { captureLogger } from './test-logger.ts';

export interface PushHarness {
  dir: string;
  sandbox: SandboxHandle;
  db: StateDb;
  client: ApiClient;
  deps: PushDeps;
  logLines: () => Record<string, unknown>[];
  /** A source with its own inbox folder. */
  source(entity: Entity, extra?: Record<string, unknown>): Promise<PushSource>;
  push(source: PushSource, name: string, content: string | Uint8Array, options?: PushOptions): Promise<FileResult>;
  close(): Promise<void>;
}

export async function pushHarness(options: { sandbox?: SandboxOptions; clock?: Clock; maxInFlight?: number } = {}): Promise<PushHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'pa-push-'));
  const sandbox = await startSandbox({ approvals: 0, largeGridRows: 0, ...options.sandbox });
  const db = await openTestDb(dir);
  const dispatcher = new Agent({ allowH2: false, connections: 4 });
  const clock = options.clock ?? systemClock;
  const client = new ApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, dispatcher, clock });
  const { logger, lines } = captureLogger('debug');
  const deps: PushDeps = { db, client, clock, logger, maxInFlight: options.maxInFlight ?? 4 };
  let sources = 0;
  return {
    dir,
    sandbox,
    db,
    client,
    deps,
    logLines: lines,
    async source(entity, extra = {}) {
      sources += 1;
      const name = `${entity}-${sources}`;
      const inbox = join(dir, 'inbox', name);
      await mkdir(inbox, { recursive: true });
      const config = SourceSchema.parse({ name, entity, path: inbox, ...extra });
      // Delta push only when the test asks for it (`delta:` given): the other push tests send every row.
      const delta = 'delta' in extra ? sourceDelta(config) : {};
      return { name, entity, mode: config.mode, inbox, batchSize: config.batch_size, read: config, ...delta };
    },
    async push(source, name, content, pushOptions = {}) {
      const file = join(source.inbox, name);
      await writeFile(file, content);
      return pushFile(deps, source, file, pushOptions);
    },
    async close() {
      await db.close();
      await dispatcher.close();
      await sandbox.close();
    },
  };
}

/**
 * A harness on a manual clock, started before a test file's (or a describe block's) tests and closed after them.
 * `push` is the harness's push with the clock driven until the push ends (poll waits pass at once).
 */
export function usePushHarness(options: { sandbox?: SandboxOptions; maxInFlight?: number; clock?: ManualClock } = {}): {
  readonly h: PushHarness;
  readonly clock: ManualClock;
  readonly push: PushHarness['push'];
} {
  const clock = options.clock ?? new ManualClock();
  const h = openForFile(() => pushHarness({ ...options, clock }));
  return { clock, h, push: (...args) => drive(clock, h.push(...args)) };
}
