/**
 * Loading the config file: YAML (with positions) -> `${VAR}` interpolation -> zod validation (strict: unknown keys
 * are errors) -> a frozen, typed Config. Every mistake becomes one ConfigError listing all problems found at
 * that stage, each with its YAML path and line; nothing is half-loaded.
 *
 * Stages stop at the first stage with problems (a syntax error makes paths meaningless; an unset variable makes
 * the value meaningless), but report every problem of that stage.
 */
import { dirname, resolve } from 'node:path';
import { createLogger } from '../log.ts';
import type { Logger } from '../log.ts';
import { ConfigError, formatProblem } from './errors.ts';
import type { ConfigPath } from './errors.ts';
import { interpolateDocument } from './interpolate.ts';
import type { Env } from './interpolate.ts';
import { configSchema } from './schema.ts';
import type { Config } from './schema.ts';
import type { SectionContext } from './section-context.ts';
import { problemAt, readYamlSource } from './yaml-source.ts';
import { configErrorMap, issuesToProblems } from './zod-issues.ts';
import type { AllowedKeys } from './zod-issues.ts';

/** Where the agent looks when no `--config` is given (relative to the working directory). */
export const DEFAULT_CONFIG_FILE = './pricing-agent.yaml';

export interface LoadConfigOptions {
  /**
   * Receives the warnings of a successful load (a key file readable by others). Default: a logger built from
   * the loaded `log` section, writing to stdout. The CLI passes a stderr logger so printed output stays clean.
   */
  readonly logger?: Logger;
}

/**
 * An empty value (`key:` with nothing after it, or `${VAR:-}` in a plain scalar) means "not set": the entry is
 * dropped before validation so the default applies, instead of failing as "expected text, got nothing".
 */
function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(value)) {
      if (entry !== null) out[key] = dropNulls(entry);
    }
    return out;
  }
  return value;
}

/** Freezes an object graph, so nothing can change the config after loading (see style.md: validated once). */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const entry of Object.values(value)) deepFreeze(entry);
  }
  return value;
}

/**
 * Loads, validates and freezes the config file at `file`. Throws ConfigError (code CONFIG_INVALID) for every
 * configuration mistake, including a missing file. Registers the API key (and a proxy password) with the
 * logger's secret filter.
 */
export async function loadConfig(
  file: string = DEFAULT_CONFIG_FILE,
  env: Env = process.env,
  options: LoadConfigOptions = {},
): Promise<Config> {
  const path = resolve(file);
  const source = await readYamlSource(path);

  const interpolationProblems = interpolateDocument(source, env);
  if (interpolationProblems.length > 0) throw new ConfigError(path, interpolationProblems);

  let raw: unknown;
  try {
    raw = dropNulls(source.doc.toJS({ maxAliasCount: 100 }));
  } catch (error) {
    // Excessive aliasing ("billion laughs") is the only way toJS fails on a document without errors.
    throw new ConfigError(path, [{ path: '', message: (error as Error).message }]);
  }
  if (raw === undefined || raw === null) {
    throw new ConfigError(path, [], `Config file ${path} is empty: copy config.example.yaml to ${path} and edit it.`);
  }

  const warnings: { path: ConfigPath; message: string }[] = [];
  const ctx: SectionContext = {
    baseDir: dirname(path),
    env,
    warn: (at, message) => warnings.push({ path: at, message }),
  };
  const allowed: AllowedKeys = new Map();
  const result = await configSchema(ctx).safeParseAsync(raw, { error: configErrorMap(allowed) });
  if (!result.success) throw new ConfigError(path, issuesToProblems(source, result.error.issues, allowed));

  const config: Config = deepFreeze(result.data);
  if (warnings.length > 0) {
    const logger = options.logger ?? createLogger({ level: config.log.level, pretty: config.log.pretty });
    for (const warning of warnings) {
      const problem = problemAt(source, warning.path, warning.message);
      logger.warn({ config_file: path, setting: problem.path, line: problem.line }, formatProblem(problem));
    }
  }
  return config;
}
