/**
 * The whole config file, composed from one schema per top-level section. Adding a section (`sources`, `pull`,
 * `outbox`, `http`, `daemon`, `feed`) is one module exporting `xxxSchema(ctx)` and one line below; the Config type
 * follows from the schemas.
 *
 * Every object is a `z.strictObject`: an unknown key (usually a typo) is an error, not silently ignored.
 * Sections with defaults for every field use `.prefault({})` so they may be left out of the file entirely.
 */
import { z } from 'zod';
import { apiSchema } from './api-schema.ts';
import { daemonSchema, httpSchema } from './daemon-schema.ts';
import { feedSchema } from './feed-schema.ts';
import { haSchema } from './ha-schema.ts';
import { logSchema } from './log-schema.ts';
import { outboxSchema } from './outbox-schema.ts';
import { pullSchema } from './pull-schema.ts';
import type { SectionContext } from './section-context.ts';
import { sourceListSchema } from './source-schema.ts';
import { stateSchema } from './state-schema.ts';

export function configSchema(ctx: SectionContext) {
  return z.strictObject({
    api: apiSchema(ctx),
    state: stateSchema(ctx).prefault({}),
    log: logSchema(ctx).prefault({}),
    pull: pullSchema(ctx).prefault({}),
    outbox: outboxSchema(ctx).prefault({}),
    sources: sourceListSchema(ctx),
    http: httpSchema(ctx).prefault({}),
    daemon: daemonSchema(ctx).prefault({}),
    feed: feedSchema(ctx).prefault({}),
    ha: haSchema(ctx).prefault({}),
  }).superRefine((config, zctx) => {
    if (config.ha.enabled && config.state.backend !== 'postgres') {
      zctx.addIssue({ code: 'custom', path: ['ha', 'enabled'], message: 'ha.enabled needs the state in PostgreSQL: set state.backend: postgres (docs/ha.md)' });
    }
  });
}

/** Deeply readonly, as the loaded Config is frozen. */
export type DeepReadonly<T> = T extends readonly (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** The loaded, validated and frozen configuration. Keys are the file's keys (snake_case); paths are absolute. */
export type Config = DeepReadonly<z.output<ReturnType<typeof configSchema>>>;
