/** Helpers for the reader tests: temp files, sources, draining a reader. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { SourceSchema } from '../../../src/config/source-schema.ts';
import type { SourceConfig, SourceInput } from '../../../src/config/source-schema.ts';
import { readRows } from '../../../src/ingest/read/index.ts';
import type { ReadInit, ReadSummary, RowAccepted, RowOutcome, RowRejected } from '../../../src/ingest/read/index.ts';

export const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures', 'csv');

/** A temp directory removed after the test file. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pricing-agent-read-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

let counter = 0;
export function writeTemp(dir: string, content: string | Uint8Array, name = `f${++counter}.csv`): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

export function source(entity: SourceConfig['entity'], extra: Partial<SourceInput> = {}): SourceConfig {
  return SourceSchema.parse({ name: 'test', path: '.', entity, ...extra });
}

export interface Drained {
  readonly rows: RowAccepted<Record<string, unknown>>[];
  readonly rejects: RowRejected[];
  readonly outcomes: RowOutcome<Record<string, unknown>>[];
  readonly summary: ReadSummary;
}

export async function drain(file: string, src: SourceConfig, init?: ReadInit): Promise<Drained> {
  const reader = await readRows(file, src, init);
  const outcomes: RowOutcome<Record<string, unknown>>[] = [];
  for await (const outcome of reader) outcomes.push(outcome);
  return {
    outcomes,
    rows: outcomes.filter((o) => o.kind === 'row'),
    rejects: outcomes.filter((o) => o.kind === 'reject'),
    summary: reader.summary(),
  };
}

/** Reads until the reader fails; resolves with the error (or throws when it does not fail). */
export async function failure(file: string, src: SourceConfig, init?: ReadInit): Promise<unknown> {
  try {
    await drain(file, src, init);
  } catch (error) {
    return error;
  }
  throw new Error('expected the file to fail');
}
