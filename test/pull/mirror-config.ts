import type { MirrorConfig } from '../../src/config/pull-schema.ts';
import { pullSchema } from '../../src/config/pull-schema.ts';

const schema = pullSchema({ baseDir: '/', env: {}, warn: () => undefined });

/** One `pull.mirrors` entry parsed as the config loader does (defaults filled in). */
export const MirrorConfigSchema = {
  parse(entry: Record<string, unknown>): MirrorConfig {
    const [parsed] = schema.parse({ mirrors: [entry] }).mirrors;
    if (!parsed) throw new Error('no mirror entry parsed');
    return parsed;
  },
};
