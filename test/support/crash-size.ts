/**
 * Sizes for the SIGKILL crash tests of push (test/integration/push-crash.test.ts, test/delta/delta-crash.test.ts). The kill points are found through
 * the child's state database (push-child.ts), so a small file meets every one of them: inside `npm test` the files are
 * short, and `npm run test:crash` (PRICING_AGENT_CRASH=full) runs them at the size they were written for.
 */
export const crashFull = process.env['PRICING_AGENT_CRASH'] === 'full';

/** The short size inside `npm test`, the full one under `npm run test:crash`. */
export function crashSize<T>(short: T, full: T): T {
  return crashFull ? full : short;
}
