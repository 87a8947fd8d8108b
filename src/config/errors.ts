/**
 * The one error class of configuration mistakes. Callers branch on `code` (or the class), never on the text.
 * The message is meant for a person: a first sentence naming the file, then one line per problem in the form
 * `sources[1].encoding: expected one of utf-8, utf-16le, ... (line 14)`. It never contains a secret value and
 * is printed without a stack trace (see src/cli/commands/errors.ts).
 */

/** A YAML path as zod and the yaml Document see it: mapping keys and sequence indexes. */
export type ConfigPath = readonly (string | number)[];

export interface ConfigProblem {
  /** Dotted display path (`api.key_file`, `sources[1].encoding`); empty for the file as a whole. */
  readonly path: string;
  readonly message: string;
  /** 1-based line in the config file, when the problem can be pinned to one. */
  readonly line?: number;
}

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  /** Absolute path of the file concerned: the config file (or the key file, for `readApiKey`). */
  readonly file: string;
  readonly problems: readonly ConfigProblem[];

  constructor(file: string, problems: readonly ConfigProblem[], summary?: string) {
    super(formatMessage(file, problems, summary));
    this.name = 'ConfigError';
    this.file = file;
    this.problems = problems;
  }
}

/** `sources[1].encoding` from `['sources', 1, 'encoding']`; keys that are not identifiers are quoted. */
export function formatPath(path: ConfigPath): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** One problem as one line: `path: message (line N)`. */
export function formatProblem(problem: ConfigProblem): string {
  const where = problem.line === undefined ? '' : ` (line ${problem.line})`;
  const prefix = problem.path === '' ? '' : `${problem.path}: `;
  return `${prefix}${problem.message}${where}`;
}

function formatMessage(file: string, problems: readonly ConfigProblem[], summary: string | undefined): string {
  if (summary !== undefined) return summary;
  const noun = problems.length === 1 ? 'problem' : 'problems';
  const lines = problems.map((p) => `  ${formatProblem(p)}`);
  return [`Config file ${file} has ${problems.length} ${noun}:`, ...lines].join('\n');
}
