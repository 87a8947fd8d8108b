/**
 * Sizes for the attack tests in test/abuse (issue: hostile and broken peers). Each attack runs twice over: a short
 * version inside `npm test`, so a bound that breaks fails CI, and the full attack behind `npm run test:abuse`
 * (PRICING_AGENT_ABUSE=full), where a bound is attacked at the size the attack was first seen at.
 */
export const abuseFull = process.env['PRICING_AGENT_ABUSE'] === 'full';

/** The short size inside `npm test`, the full one under `npm run test:abuse`. */
export function abuseSize<T>(short: T, full: T): T {
  return abuseFull ? full : short;
}
