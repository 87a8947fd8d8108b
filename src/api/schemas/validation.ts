/**
 * Turns zod issues into the API's ValidationError shape (`loc`, `msg`, `type`), using the machine codes the spec
 * names (missing, string_too_long, value_error, datetime_parsing, ...). The sandbox answers 422 with these; the agent
 * writes them into reject reports, so a row refused locally reads exactly like a row refused by the API.
 */
import type { z } from 'zod';
import type { ValidationError } from './envelopes.ts';

type Loc = (string | number)[];

function toLoc(prefix: Loc, path: readonly PropertyKey[]): Loc {
  return [...prefix, ...path.map((part) => (typeof part === 'number' ? part : String(part)))];
}

const TYPE_NAMES: Record<string, string> = {
  string: 'string_type',
  number: 'float_type',
  int: 'int_type',
  boolean: 'bool_type',
  object: 'dict_type',
  array: 'list_type',
};

const FORMAT_TYPES: Record<string, string> = {
  datetime: 'datetime_parsing',
  date: 'date_parsing',
  uuid: 'uuid_parsing',
  regex: 'decimal_parsing', // the only regex in the contract is the decimal pattern
};

function issueType(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? 'missing' : (TYPE_NAMES[issue.expected] ?? 'value_error');
    case 'too_big':
      if (issue.origin === 'string') return 'string_too_long';
      if (issue.origin === 'array') return 'too_long';
      return 'less_than_equal';
    case 'too_small':
      if (issue.origin === 'string') return 'string_too_short';
      if (issue.origin === 'array') return 'too_short';
      return 'greater_than_equal';
    case 'invalid_format':
      return FORMAT_TYPES[issue.format] ?? 'value_error';
    case 'invalid_value':
      return 'enum';
    case 'unrecognized_keys':
      return 'extra_forbidden';
    default:
      return 'value_error';
  }
}

function issueMessage(issue: z.core.$ZodIssue, type: string): string {
  if (type === 'missing') return 'Field required';
  if (type === 'extra_forbidden') return 'Extra inputs are not permitted';
  if (issue.code === 'too_big' && issue.origin === 'string') {
    return `String should have at most ${String(issue.maximum)} characters`;
  }
  if (issue.code === 'too_small' && issue.origin === 'string') {
    return `String should have at least ${String(issue.minimum)} character${issue.minimum === 1 ? '' : 's'}`;
  }
  return issue.message;
}

/**
 * Maps the issues of a failed parse to ValidationErrors. Parse with `{ reportInput: true }` so that a missing field
 * (input undefined) is told apart from a wrong type. `prefix` is prepended to every loc, e.g. ['body', 'items', 3].
 */
export function toValidationErrors(error: z.ZodError, prefix: Loc = []): ValidationError[] {
  const out: ValidationError[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        out.push({ loc: toLoc(prefix, [...issue.path, key]), msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
      }
      continue;
    }
    const type = issueType(issue);
    const entry: ValidationError = { loc: toLoc(prefix, issue.path), msg: issueMessage(issue, type), type };
    if (issue.input !== undefined) entry.input = issue.input;
    out.push(entry);
  }
  return out;
}
