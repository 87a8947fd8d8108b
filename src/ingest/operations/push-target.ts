/**
 * What `push FILE --source NAME | --entity E` pushes to, and how the file is read.
 *
 * - `--source NAME`: the configured source's reading options (encoding, delimiter, mapping, defaults, formats),
 *   mode and batch size, and its inbox folder: the file ends in that inbox's archive/ or failed/, as if it had been
 *   dropped there. `--mode` overrides the source's mode.
 * - `--entity E`: a file whose headers are the API's field names (UTF-8, BOM honoured, delimiter detected). Its
 *   folders are the agent's own, `<state.dir>/push/<entity>/` (processing/, archive/YYYY-MM-DD/, failed/): a
 *   one-shot push must not create folders next to a file a person named on the command line. The ledger's source
 *   name is `cli:<entity>`.
 */
import { join } from 'node:path';
import { BULK_BATCH_DEFAULT, ENTITIES, type Entity } from '../../api/schemas/index.ts';
import { ConfigError, type Config } from '../../config/index.ts';
import { compileSource, entityReadOptions, SourceConfigError, type CompiledSource } from '../read/index.ts';
import type { PushSource } from '../file/push-file.ts';
import { entityDelta, sourceDelta } from '../delta/delta-plan.ts';
import { UsageError } from '../../usage-error.ts';

export type PushMode = 'bulk' | 'import';

export interface PushTarget {
  readonly source: PushSource & { readonly read: CompiledSource };
  /** For people: `source erp-prices` or `entity products`. */
  readonly label: string;
  /** True for `--entity`: the inbox is the agent's own folder, created when missing. */
  readonly ownInbox: boolean;
}

/** A wrong combination of flags or an unknown name: exit 2, like a config mistake. */
export class PushUsageError extends UsageError {
  constructor(message: string) {
    super('PUSH_USAGE', message);
  }
}

/** The file to push is not there: exit 2, like a config mistake. */
export class PushFileMissingError extends UsageError {
  constructor(message: string) {
    super('PUSH_FILE_MISSING', message);
  }
}

export interface TargetOptions {
  readonly source?: string;
  readonly entity?: string;
  readonly mode?: string;
}

function modeOf(raw: string | undefined, fallback: PushMode): PushMode {
  if (raw === undefined) return fallback;
  if (raw === 'bulk' || raw === 'import') return raw;
  throw new PushUsageError(`--mode must be bulk or import (got ${JSON.stringify(raw)})`);
}

/** The directory `push --entity E` uses as its inbox. */
export function entityInbox(stateDir: string, entity: Entity): string {
  return join(stateDir, 'push', entity);
}

export function resolveTarget(config: Config, configFile: string, options: TargetOptions): PushTarget {
  if ((options.source === undefined) === (options.entity === undefined)) {
    throw new PushUsageError('give exactly one of --source NAME (a configured source) and --entity ENTITY');
  }
  if (options.entity !== undefined) {
    const entity = ENTITIES.find((e) => e === options.entity);
    if (entity === undefined) {
      throw new PushUsageError(`--entity must be one of ${ENTITIES.join(', ')} (got ${JSON.stringify(options.entity)})`);
    }
    const mode = modeOf(options.mode, 'bulk');
    return {
      source: {
        name: `cli:${entity}`,
        entity,
        mode,
        inbox: entityInbox(config.state.dir, entity),
        batchSize: BULK_BATCH_DEFAULT,
        read: compileSource(entityReadOptions(entity)),
        ...entityDelta(entity, mode),
      },
      label: `entity ${entity}`,
      ownInbox: true,
    };
  }
  const index = config.sources.findIndex((s) => s.name === options.source);
  const source = config.sources[index];
  if (source === undefined) {
    const names = config.sources.map((s) => s.name);
    const known = names.length === 0 ? `${configFile} has no sources:` : `sources in ${configFile}: ${names.join(', ')}`;
    throw new PushUsageError(`no source named ${JSON.stringify(options.source)} (${known})`);
  }
  const read = compileConfigured(config, configFile, index);
  const mode = modeOf(options.mode, source.mode);
  return {
    source: {
      name: source.name,
      entity: source.entity,
      mode,
      inbox: source.path,
      batchSize: source.batch_size,
      read,
      ...sourceDelta(source, mode),
    },
    label: `source ${source.name}`,
    ownInbox: false,
  };
}

/** `compileSource` of the config's source at `index`; a source that cannot work is a ConfigError naming its path. */
function compileConfigured(config: Config, configFile: string, index: number): CompiledSource {
  const problem = sourceProblem(config, index);
  if (problem !== null) throw new ConfigError(configFile, [problem]);
  return compileSource(config.sources[index] as Config['sources'][number]);
}

function sourceProblem(config: Config, index: number): { path: string; message: string } | null {
  try {
    compileSource(config.sources[index] as Config['sources'][number]);
    return null;
  } catch (error) {
    if (!(error instanceof SourceConfigError)) throw error;
    const prefix = `${error.path}: `;
    const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    return { path: `sources[${index}].${error.path}`, message };
  }
}

/**
 * What the config schema cannot check about the sources (a default its field cannot take): every problem, as one
 * ConfigError. `config validate` and the daemon run it.
 */
export function checkSources(config: Config, configFile: string): void {
  const problems = config.sources.map((_, index) => sourceProblem(config, index)).filter((p) => p !== null);
  if (problems.length > 0) throw new ConfigError(configFile, problems);
}
