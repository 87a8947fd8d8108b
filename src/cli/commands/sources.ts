/**
 * `pricing-agent sources suggest FILE [--entity E] [--set FIELD=VALUE ...] [--preview N]`: a `sources:` entry drafted
 * from the file itself (src/ingest/suggest/draft-source.ts), printed with a comment on every decision. Needs no
 * configuration file and touches nothing: it reads FILE and, with --preview, runs the push's own dry run on it
 * (rows as they would be sent, then the whole file's row fates as `push --dry-run` counts them).
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ENTITIES, type Entity } from '../../api/schemas/index.ts';
import { SourceSchema } from '../../config/source-schema.ts';
import { dryRun } from '../../ingest/operations/dry-run.ts';
import { compileSource, readRows, SourceConfigError, type CompiledSource } from '../../ingest/read/index.ts';
import { draftSource, type Draft } from '../../ingest/suggest/draft-source.ts';
import { sampleFile } from '../../ingest/suggest/sample-file.ts';
import { UsageError } from '../../usage-error.ts';
import { runCommand } from './errors.ts';
import { dryRunText } from './push-summary.ts';

interface SuggestOptions {
  readonly entity?: Entity;
  readonly set: Record<string, string>;
  readonly preview?: number;
}

function setValue(raw: string, previous: Record<string, string>): Record<string, string> {
  const at = raw.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('expected FIELD=VALUE, e.g. store_id=S-0001');
  return { ...previous, [raw.slice(0, at).trim()]: raw.slice(at + 1) };
}

/** A usage mistake: nothing to read, or nothing that could be previewed yet. */
class SuggestUsageError extends UsageError {
  constructor(message: string) {
    super('SUGGEST_USAGE', message);
  }
}

/**
 * The draft as a source the push would read with. The draft itself is always valid; what --set adds may not be (a
 * field the entity does not have, a value that is not a decimal): that is the command's usage mistake, in a sentence.
 */
function compiledDraft(draft: Draft): CompiledSource {
  const parsed = SourceSchema.safeParse(draft.source);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'the source'}: ${issue.message}`);
    throw new SuggestUsageError(`${problems.join('; ')}: correct the --set values`);
  }
  try {
    return compileSource(parsed.data);
  } catch (error) {
    if (error instanceof SourceConfigError) throw new SuggestUsageError(`${error.message}: correct the --set values`);
    throw error;
  }
}

/** The first `count` rows as they would be sent, then the file's row fates as a dry run counts them. */
async function preview(file: string, draft: Draft, count: number): Promise<string> {
  if (draft.placeholders.length > 0) {
    throw new SuggestUsageError(`cannot preview before ${draft.placeholders.join(', ')} is set: add --set FIELD=VALUE for each`);
  }
  const compiled = compiledDraft(draft);
  const out: string[] = [`# The first ${count} rows as they would be sent:`];
  const reader = await readRows(file, compiled);
  try {
    for await (const outcome of reader) {
      if (outcome.kind === 'row') out.push(`#   line ${outcome.line}: ${JSON.stringify(outcome.record)}`);
      else out.push(`#   line ${outcome.line}: rejected: ${outcome.errors.map((e) => `${e.field ?? ''} ${e.message}`.trim()).join('; ')}`);
      if (out.length > count) break;
    }
  } finally {
    reader.close();
  }
  const scratch = await mkdtemp(join(tmpdir(), 'pa-suggest-'));
  try {
    const result = await dryRun({
      file,
      read: compiled,
      entity: draft.entity,
      mode: 'bulk',
      batchSize: 1000,
      rejectsPath: join(scratch, `${basename(file)}.rejects.csv`),
    });
    const fates = dryRunText(file, `suggested source ${String(draft.source['name'])}`, 'bulk', result).replace(/^.*rejects: .*$\n?/m, '');
    out.push('# The whole file, as push --dry-run would count it:', ...fates.trimEnd().split('\n').map((l) => `#   ${l}`));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return `${out.join('\n')}\n`;
}

export function sourcesCommand(): Command {
  const command = new Command('sources').description('draft a source for a file');
  command
    .command('suggest')
    .description('read FILE (CSV in any supported encoding, or xlsx) and print a ready sources: entry, with the reason for each decision')
    .argument('<file>', 'an export as the system writes it')
    .addOption(new Option('--entity <entity>', 'what the file holds (default: guessed from its columns)').choices(ENTITIES))
    .option('--set <field=value>', 'a value for every row, for a field the file does not hold (repeatable)', setValue, {})
    .option('--preview <n>', 'also show the first N rows as they would be sent, and the whole file as push --dry-run counts it', (raw) => {
      const n = Number(raw);
      if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidArgumentError('expected a number from 1 to 1000');
      return n;
    })
    .action(
      runCommand(async (file: string, options: SuggestOptions) => {
        const path = resolve(file);
        if (!(await stat(path).then((s) => s.isFile(), () => false))) throw new SuggestUsageError(`${path}: no such file`);
        const draft = draftSource({ sample: await sampleFile(path), fileName: basename(path), entity: options.entity, set: options.set });
        process.stdout.write(`# sources: entry drafted from ${basename(path)} by pricing-agent sources suggest\n${draft.yaml}`);
        if (options.preview !== undefined) process.stdout.write(await preview(path, draft, options.preview));
      }),
    );
  return command;
}
