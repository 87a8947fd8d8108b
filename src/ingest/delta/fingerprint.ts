/**
 * The fingerprint of what a source sends: its mapping (every option of the source that turns a file's cells into API
 * records), the fields its file fills, the entity and the agent's canonical form. The state remembers rows under the
 * fingerprint they were accepted with; a row remembered under another one counts as changed (sent once), so nothing
 * is ever skipped on a comparison made with other rules.
 *
 * Everything in a source's options is part of the mapping except the keys below, which only say where files come
 * from, how they are sent or guarded: a mapping option added later is covered without a second list to forget.
 */
import { createHash } from 'node:crypto';
import { CANONICAL_FORM_VERSION } from './fast/canonical.ts';

/** Options of a source that do not change what a row becomes. */
const NOT_MAPPING = new Set([
  'name',
  'path',
  'mode',
  'pattern',
  'batch_size',
  'stable_ms',
  'poll',
  'poll_interval_ms',
  'done_marker',
  'delta',
  'snapshot',
  'missing',
  'brakes',
  'workbook_limits', // how large a workbook may be read, not what its rows become
]);

/** JSON with object keys sorted, so that the same options give the same text. */
function stable(value: unknown): string {
  if (value instanceof Map) return stable(Object.fromEntries(value));
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stable(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * `options`: the source's options as configured (a source entry, or the options of `push --entity`); `fields`: the
 * API fields this file fills (sorted).
 */
export function sourceFingerprint(options: Readonly<Record<string, unknown>>, fields: readonly string[]): string {
  const mapping = Object.fromEntries(Object.entries(options).filter(([key]) => !NOT_MAPPING.has(key)));
  const text = stable({ canonical_form: CANONICAL_FORM_VERSION, mapping, fields });
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}
