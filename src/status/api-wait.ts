/**
 * The Retry-After window as `status` and the console show it: until when, and why (the status and the request that
 * carried it), from the state database, bounded by api.max_retry_after exactly as the agent's gate bounds it
 * (rate-gate.ts windowInForce). Null when no window is open.
 */
import { describeWindow, windowInForce, type WaitWindow } from '../api/rate-gate.ts';
import { maxRetryAfterMs, type Config } from '../config/index.ts';
import { storedWaitWindow } from '../store/api-state.ts';
import { hasTable } from '../store/meta.ts';
import type { StateDb } from '../store/state-db.ts';

export const CLEAR_WAIT_COMMAND = 'pricing-agent api clear-wait';

export interface ApiWaitView {
  /** ISO time at which requests may be sent again. */
  until: string;
  /** The status that carried the Retry-After (429, or a 503 from a proxy). */
  status: number;
  method: string;
  path: string;
  /** One line: until when and why. */
  text: string;
  /** How to end the wait early. */
  clear_command: string;
}

export async function apiWaitOf(db: StateDb, config: Config, nowMs: number): Promise<ApiWaitView | null> {
  if (!(await hasTable(db, 'api_pacing'))) return null;
  const window = windowInForce(await storedWaitWindow(db), null, maxRetryAfterMs(config.api), nowMs);
  return window === null ? null : apiWaitView(window);
}

/** The shown form of a window (status, the console, /readyz). */
export function apiWaitView(window: WaitWindow): ApiWaitView {
  return {
    until: new Date(window.untilMs).toISOString(),
    status: window.status,
    method: window.method,
    path: window.path,
    text: `the API asked the agent to wait ${describeWindow(window)}`,
    clear_command: CLEAR_WAIT_COMMAND,
  };
}
