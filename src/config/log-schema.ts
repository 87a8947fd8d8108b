/**
 * The `log:` section: level and output format of the agent's logger (src/log.ts).
 */
import { z } from 'zod';
import { LOG_LEVELS } from '../log.ts';
import type { SectionContext } from './section-context.ts';

export function logSchema(_ctx: SectionContext) {
  return z.strictObject({
    /** trace | debug | info | warn | error | fatal. */
    level: z.enum(LOG_LEVELS).default('info'),
    /** Human-readable lines instead of JSON (needs the pino-pretty development dependency). */
    pretty: z.boolean().default(false),
  });
}
