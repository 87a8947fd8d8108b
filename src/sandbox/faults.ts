/**
 * Fault injection for /v1 requests (never the control plane): per request, one draw from the seeded fault stream
 * picks at most one of 500, 502, 503, a dropped connection before the write is committed (the handler never runs)
 * or after it is committed (the handler runs, then the socket is destroyed instead of answering). Added latency
 * applies to every targeted request, through the injected clock. Same seed and same request sequence, same faults.
 */
import { z } from 'zod';
import type { Prng } from './prng.ts';
import { RequestMatcher } from './request-matcher.ts';

const probability = z.number().min(0).max(1).default(0);

export const FaultConfig = z
  .strictObject({
    error_500: probability,
    error_502: probability,
    error_503: probability,
    drop_before_commit: probability,
    drop_after_commit: probability,
    latency_ms: z.number().int().min(0).default(0),
    /** Targeted requests ("/v1/transactions" or "POST /v1/transactions/bulk"); empty: every /v1 request. */
    paths: z.array(z.string()).default([]),
  })
  .refine((c) => c.error_500 + c.error_502 + c.error_503 + c.drop_before_commit + c.drop_after_commit <= 1, {
    message: 'the probabilities must add up to at most 1',
  });
export type FaultConfig = z.output<typeof FaultConfig>;
export type FaultInput = z.input<typeof FaultConfig>;

export const FAULT_KINDS = ['none', 'error_500', 'error_502', 'error_503', 'drop_before_commit', 'drop_after_commit'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultDecision {
  readonly kind: FaultKind;
  readonly latencyMs: number;
}

const NO_FAULT: FaultDecision = { kind: 'none', latencyMs: 0 };

export const FAULT_STATUS = { error_500: 500, error_502: 502, error_503: 503 } as const;
export const FAULT_MESSAGES = {
  error_500: 'Internal Server Error',
  error_502: 'Bad Gateway',
  error_503: 'Service Unavailable',
} as const;

export class FaultInjector {
  readonly #prng: Prng;
  #config: FaultConfig | null = null;
  #matcher = new RequestMatcher([]);
  readonly injected: Record<Exclude<FaultKind, 'none'>, number> = {
    error_500: 0,
    error_502: 0,
    error_503: 0,
    drop_before_commit: 0,
    drop_after_commit: 0,
  };

  constructor(prng: Prng) {
    this.#prng = prng;
  }

  get config(): FaultConfig | null {
    return this.#config;
  }

  configure(config: FaultConfig | null): void {
    this.#config = config;
    this.#matcher = new RequestMatcher(config?.paths ?? []);
  }

  decide(method: string, path: string): FaultDecision {
    const config = this.#config;
    if (config === null) return NO_FAULT;
    if (!this.#matcher.empty && !this.#matcher.matches(method, path)) return NO_FAULT;
    const draw = this.#prng.float();
    let edge = 0;
    for (const kind of ['error_500', 'error_502', 'error_503', 'drop_before_commit', 'drop_after_commit'] as const) {
      edge += config[kind];
      if (draw < edge) {
        this.injected[kind] += 1;
        return { kind, latencyMs: config.latency_ms };
      }
    }
    return config.latency_ms > 0 ? { kind: 'none', latencyMs: config.latency_ms } : NO_FAULT;
  }
}
