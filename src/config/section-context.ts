/**
 * What a config section's schema may depend on besides the file's values. Each section module exports a
 * function `(ctx: SectionContext) => zod schema`, and src/config/schema.ts composes them; the context makes
 * relative paths and environment defaults explicit instead of reading globals.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import type { ConfigPath } from './errors.ts';
import type { Env } from './interpolate.ts';

export interface SectionContext {
  /** Directory of the config file: relative paths in the file are relative to it, not to the working directory. */
  readonly baseDir: string;
  /** The environment the file was interpolated with (defaults such as HTTPS_PROXY come from here too). */
  readonly env: Env;
  /** Records a warning about the value at `path`; the loader logs it with its line once loading succeeded. */
  warn(path: ConfigPath, message: string): void;
}

/** A non-empty file or directory path, resolved to an absolute path against the config file's directory. */
export function pathSchema(ctx: SectionContext) {
  return z
    .string()
    .min(1)
    .transform((value) => resolve(ctx.baseDir, value));
}
