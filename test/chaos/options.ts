import type { DialectName } from '../../src/sandbox/index.ts';

/**
 * The options of the chaos scenarios and their defaults (the CI run), in a module of their own: cli.ts reads them
 * before it knows which backend the run is for (the runners load the state helpers, which read it once).
 */
export interface ChaosOptions {
  readonly seed: number;
  /** SIGKILLs during the chaotic phase (each followed by a restart). */
  readonly kills: number;
  readonly durationMs: number;
  readonly files: number;
  /** Average rows per file. */
  readonly rows: number;
  /** Share of API requests answered with a fault (5xx, dropped connections), split evenly over the five kinds. */
  readonly faultRate: number;
  readonly latencyMs: number;
  readonly txMode: 'bulk' | 'import';
  /** The reading of the API document the sandbox plays (src/sandbox/dialect.ts). */
  readonly dialect: DialectName;
  /** How long the final daemon may take to settle. */
  readonly settleTimeoutMs: number;
  /** Keep the run's folder even when every check passed. */
  readonly keep: boolean;
  readonly progress?: (line: string) => void;
}

export const CHAOS_DEFAULTS: ChaosOptions = {
  seed: 1,
  kills: 12,
  durationMs: 60_000,
  files: 32,
  rows: 160,
  faultRate: 0.12,
  latencyMs: 10,
  txMode: 'import',
  dialect: 'default',
  settleTimeoutMs: 90_000,
  keep: false,
};
