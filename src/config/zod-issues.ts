/**
 * zod issues as problems a person can fix: short messages in the file's terms ("expected a whole number, got
 * text"), one problem per unknown key with a did-you-mean, and the line of each.
 *
 * No message quotes the value that was given: any value may be a secret (a misplaced key, a proxy password).
 */
import type { z } from 'zod';
import type { ConfigProblem } from './errors.ts';
import { problemAt } from './yaml-source.ts';
import type { YamlSource } from './yaml-source.ts';

type RawIssue = z.core.$ZodRawIssue;

const NOUNS: Readonly<Record<string, string>> = {
  int: 'a whole number',
  number: 'a number',
  string: 'text',
  boolean: 'true or false',
  object: 'a mapping (key: value lines)',
  array: 'a list',
};

function describeValue(value: unknown): string {
  if (value === null) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return 'text';
  if (typeof value === 'number') return Number.isInteger(value) ? 'a whole number' : 'a decimal number';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return typeof value;
}

function sizeMessage(issue: RawIssue & { code: 'too_small' | 'too_big' }): string | undefined {
  const small = issue.code === 'too_small';
  const limit = small ? issue.minimum : issue.maximum;
  const bound = String(limit);
  if (issue.origin === 'string') {
    if (small && limit === 1) return 'must not be empty';
    return small ? `must be at least ${bound} characters` : `must be at most ${bound} characters`;
  }
  if (issue.origin === 'array') {
    return small ? `must have at least ${bound} entries` : `must have at most ${bound} entries`;
  }
  if (issue.inclusive === false) return small ? `must be greater than ${bound}` : `must be less than ${bound}`;
  return small ? `must be at least ${bound}` : `must be at most ${bound}`;
}

/** Allowed keys of strict objects that reported unknown keys, by joined path; filled by the error map. */
export type AllowedKeys = Map<string, readonly string[]>;

const pathKey = (path: readonly PropertyKey[]): string => JSON.stringify(path.map(String));

/** A value as a list of choices shows it: a word as it is, anything else quoted (`","`, `"\t"`). */
function shownValue(value: unknown): string {
  return typeof value === 'string' && /^[\w.-]+$/.test(value) ? value : JSON.stringify(value);
}

/** A zod error map (pass as `{ error }` to safeParse) producing the messages of this module. */
export function configErrorMap(allowed: AllowedKeys): (issue: RawIssue) => string | undefined {
  return (issue) => {
    switch (issue.code) {
      case 'invalid_type':
        if (issue.input === undefined) return 'is required';
        return `expected ${NOUNS[issue.expected] ?? issue.expected}, got ${describeValue(issue.input)}`;
      case 'invalid_value':
        return `expected one of ${issue.values.map(shownValue).join(', ')}`;
      case 'too_small':
      case 'too_big':
        return sizeMessage(issue);
      case 'unrecognized_keys': {
        const def = issue.inst?._zod.def as { shape?: Record<string, unknown> } | undefined;
        if (def?.shape !== undefined) allowed.set(pathKey(issue.path ?? []), Object.keys(def.shape));
        return 'unknown key';
      }
      case 'invalid_union': {
        // A discriminated union (pull.mirrors[].stream) names the values it takes.
        const options = (issue as { options?: readonly unknown[] }).options;
        return options !== undefined && options.length > 0 ? `expected one of ${options.map(shownValue).join(', ')}` : 'does not match any of the allowed forms';
      }
      case 'invalid_format':
        return `is not a valid ${issue.format}`;
      default:
        return undefined;
    }
  };
}

/** Edit distance, for did-you-mean on unknown keys. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

function unknownKeyMessage(key: string, allowed: readonly string[] | undefined): string {
  if (allowed === undefined || allowed.length === 0) return 'unknown key';
  const typed = key.toLowerCase();
  const ranked = allowed
    .map((candidate) => ({ candidate, d: distance(typed, candidate.toLowerCase()) }))
    .sort((x, y) => x.d - y.d);
  const best = ranked[0];
  // A close spelling, or a missing/extra part (`timeout` for `timeout_ms`).
  const close = (c: string, d: number): boolean =>
    d <= Math.max(2, Math.floor(typed.length / 3)) || (typed.length >= 3 && c.toLowerCase().startsWith(typed));
  if (best !== undefined && close(best.candidate, best.d)) return `unknown key (did you mean ${best.candidate}?)`;
  const prefixed = allowed.find((candidate) => close(candidate, Number.POSITIVE_INFINITY));
  if (prefixed !== undefined) return `unknown key (did you mean ${prefixed}?)`;
  return `unknown key (allowed here: ${allowed.join(', ')})`;
}

/** Converts final zod issues into located problems, in file order. */
export function issuesToProblems(
  source: YamlSource,
  issues: readonly z.core.$ZodIssue[],
  allowed: AllowedKeys,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  // A whole number out of range also breaks zod's own safe-integer bound: that second line says nothing to a person.
  const samePath = (a: z.core.$ZodIssue, b: z.core.$ZodIssue) => a !== b && a.path.join('\0') === b.path.join('\0');
  const safeBound = (issue: z.core.$ZodIssue) =>
    (issue.code === 'too_big' && issue.maximum === Number.MAX_SAFE_INTEGER) || (issue.code === 'too_small' && issue.minimum === Number.MIN_SAFE_INTEGER);
  for (const issue of issues.filter((i) => !(safeBound(i) && issues.some((other) => samePath(i, other))))) {
    const path = issue.path.map((segment) => (typeof segment === 'number' ? segment : String(segment)));
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        problems.push(problemAt(source, [...path, key], unknownKeyMessage(key, allowed.get(pathKey(path))), 'key'));
      }
    } else {
      problems.push(problemAt(source, path, issue.message));
    }
  }
  return problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}
