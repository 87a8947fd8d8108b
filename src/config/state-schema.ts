/**
 * The `state:` section: where the agent keeps its SQLite database and working files.
 */
import { z } from 'zod';
import { pathSchema } from './section-context.ts';
import type { SectionContext } from './section-context.ts';

export function stateSchema(ctx: SectionContext) {
  return z.strictObject({
    /** Directory of the state database; relative to the config file's directory. */
    dir: pathSchema(ctx).prefault('./state'),
  });
}
