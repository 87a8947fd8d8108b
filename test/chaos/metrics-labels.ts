/**
 * The /metrics page must have bounded label sets only: every label value comes from a set fixed by the code or
 * the config (source names, entities, operations, statuses, job names), never a file name, an id or a path.
 * Used by the chaos run (on the page after a whole run) and by the security test.
 */
import { OPERATIONS } from '../../src/api/operations.ts';
import { ENTITIES } from '../../src/api/schemas/index.ts';
import { MIRROR_STREAM_NAMES } from '../../src/config/pull-schema.ts';
import { HA_ROLES } from '../../src/store/ha-lease.ts';

export interface LabelRules {
  /** The configured source names. */
  readonly sources: readonly string[];
  /** POS consumer names registered in the outbox (a set the retailer's IT controls). */
  readonly consumers?: readonly string[];
}

const JOBS = new Set(['approved_prices', 'approved_prices_reconcile', ...MIRROR_STREAM_NAMES.map((s) => `mirror:${s}`)]);

/** Per label name, whether a value belongs to its bounded set. Names not listed here are a problem by themselves. */
function validators(rules: LabelRules): Record<string, (value: string) => boolean> {
  const sources = new Set(rules.sources);
  const consumers = new Set(rules.consumers ?? []);
  return {
    source: (v) => sources.has(v),
    // Files (done ... held) and scheduled job runs (success, failure).
    outcome: (v) => ['done', 'failed', 'duplicate', 'deferred', 'refused', 'vanished', 'held', 'success', 'failure'].includes(v),
    entity: (v) => (ENTITIES as readonly string[]).includes(v),
    result: (v) => ['accepted', 'rejected', 'superseded', 'merged', 'unchanged', 'skipped'].includes(v),
    operation: (v) => Object.hasOwn(OPERATIONS, v),
    status: (v) => /^[1-5]\d\d$/.test(v),
    state: (v) => ['completed', 'failed'].includes(v),
    job: (v) => JOBS.has(v),
    stream: (v) => (MIRROR_STREAM_NAMES as readonly string[]).includes(v),
    consumer: (v) => consumers.has(v),
    // pricing_agent_ha_role (an HA pair).
    role: (v) => (HA_ROLES as readonly string[]).includes(v),
    // The agent's and Node's version (pricing_agent_info, nodejs_version_info).
    version: (v) => /^v?\d+\.\d+\.\d+(-[\w.]+)?$/.test(v),
    major: (v) => /^\d{1,3}$/.test(v),
    minor: (v) => /^\d{1,3}$/.test(v),
    patch: (v) => /^\d{1,3}$/.test(v),
    // prom-client's default process metrics: GC kinds, V8 heap spaces, libuv resource types, histogram buckets.
    kind: (v) => ['major', 'minor', 'incremental', 'weakcb'].includes(v),
    space: (v) => /^[a-z_]{1,40}$/.test(v),
    type: (v) => /^[A-Za-z]{1,40}$/.test(v),
    le: (v) => v === '+Inf' || /^\d+(\.\d+)?(e[+-]?\d+)?$/.test(v),
  };
}

/** Problems with the page's labels; empty when every label is bounded. */
export function metricLabelProblems(text: string, rules: LabelRules): string[] {
  const check = validators(rules);
  const problems = new Set<string>();
  const series = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s/.exec(line);
    if (!match) {
      problems.add(`unparsable line: ${line.slice(0, 80)}`);
      continue;
    }
    const [, name = '', labels] = match;
    series.set(name, (series.get(name) ?? 0) + 1);
    if (labels === undefined || labels === '') continue;
    for (const pair of labels.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      const [, label = '', value = ''] = pair;
      const valid = check[label];
      if (!valid) problems.add(`${name}: label ${label} is not a known bounded label`);
      else if (!valid(value)) problems.add(`${name}: ${label}="${value}" is outside its bounded set`);
    }
  }
  for (const [name, count] of series) if (count > 300) problems.add(`${name}: ${count} series`);
  return [...problems];
}
