/**
 * The `outbox:` section: what the agent writes for POS systems besides the database (docs/outbox.md).
 * `exports`: per-store files of new feed rows, written after each pull and by `pricing-agent outbox export`.
 */
import { z } from 'zod';
import { pathSchema } from './section-context.ts';
import type { SectionContext } from './section-context.ts';

/** The formats of src/outbox/store-files.ts (EXPORT_FORMATS); config does not import the outbox. */
export const OUTBOX_EXPORT_FORMATS = ['csv', 'jsonl'] as const;

export function outboxSchema(ctx: SectionContext) {
  return z.strictObject({
    /** null (the default): no per-store files. */
    exports: z
      .strictObject({
        /** `<dir>/<store_id>/prices-<from_seq>-<to_seq>.<format>`; relative to the config file's directory. */
        dir: pathSchema(ctx),
        format: z.enum(OUTBOX_EXPORT_FORMATS).default('csv'),
        /** A store's backlog is split into files of at most this many rows. */
        max_rows_per_file: z.number().int().min(1).max(1_000_000).default(50_000),
      })
      .nullable()
      .default(null),
  });
}

export type OutboxConfig = z.output<ReturnType<typeof outboxSchema>>;
