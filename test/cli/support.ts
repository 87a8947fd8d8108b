/**
 * What the tests of the status and files commands stand on: a folder with the sandbox's key in ./api-key and the
 * inboxes ./inbox/products and ./inbox/tx; a stand-in for a running daemon's local HTTP server; and the push of a
 * file from a configured source as the daemon makes it (every row sent: no delta).
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiClient } from '../../src/api/client.ts';
import { systemClock } from '../../src/clock.ts';
import type { Config } from '../../src/config/index.ts';
import { pushFile, type FileResult } from '../../src/ingest/file/push-file.ts';
import { compileSource } from '../../src/ingest/read/index.ts';
import type { StateDb } from '../../src/store/state-db.ts';
import { captureLogger } from '../support/test-logger.ts';

/** A new temp folder (`prefix`) holding `apiKey` in ./api-key and the inbox folders of products and tx. */
export async function cliFolder(prefix: string, apiKey: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await writeFile(join(dir, 'api-key'), `${apiKey}\n`, { mode: 0o600 });
  for (const inbox of ['products', 'tx']) await mkdir(join(dir, 'inbox', inbox), { recursive: true });
  return dir;
}

/** An HTTP server on 127.0.0.1 answering as `answer` says, where a config's http.port points at a daemon. */
export async function fakeDaemon(answer: RequestListener): Promise<{ port: number; close(): Promise<void> }> {
  const server = createServer(answer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Pushes `name` from the inbox of the configured source `sourceName`, writing `content` there first (null: it is there). */
export async function pushConfigured(
  on: { config: Config; db: StateDb; client: ApiClient },
  sourceName: string,
  name: string,
  content: string | null,
): Promise<FileResult> {
  const source = on.config.sources.find((s) => s.name === sourceName);
  if (!source) throw new Error(sourceName);
  const path = join(source.path, name);
  if (content !== null) await writeFile(path, content);
  const deps = { db: on.db, client: on.client, clock: systemClock, logger: captureLogger('info').logger, maxInFlight: 2 };
  return pushFile(deps, { name: source.name, entity: source.entity, mode: source.mode, inbox: source.path, batchSize: source.batch_size, read: compileSource(source) }, path);
}
