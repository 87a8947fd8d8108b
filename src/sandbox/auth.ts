/**
 * Bearer authentication with `svc_live_` keys, one active key per account (spec, Authentication). Rotating
 * replaces the key at once; the old key then gets 401 like any unknown key. Every request refused for its key is
 * counted by reason, so tests can assert that an agent stopped using a rotated key.
 *
 * 403 (valid key, resource denied) is configured with `deny` rules: the spec does not show its permission model.
 */
import { API_KEY_PREFIX } from '../api/schemas/index.ts';
import type { Prng } from './prng.ts';
import { RequestMatcher } from './request-matcher.ts';

export const KEY_REJECTIONS = ['missing', 'malformed', 'unknown', 'rotated'] as const;
export type KeyRejection = (typeof KEY_REJECTIONS)[number];

const KEY_BODY_LENGTH = 40;
const BEARER = /^Bearer +(\S+)\s*$/i;

export type AuthResult = { readonly ok: true } | { readonly ok: false; readonly reason: KeyRejection };

export class KeyRing {
  readonly userId: string;
  #key: string;
  #keyId: string;
  readonly #retired = new Set<string>();
  readonly #rejected: Record<KeyRejection, number> = { missing: 0, malformed: 0, unknown: 0, rotated: 0 };
  readonly #prng: Prng;
  #deny = new RequestMatcher([]);

  constructor(prng: Prng) {
    this.#prng = prng;
    this.userId = prng.uuid();
    this.#key = this.#newKey();
    this.#keyId = prng.uuid();
  }

  get key(): string {
    return this.#key;
  }

  get keyId(): string {
    return this.#keyId;
  }

  /** Generates a new key; the previous one stops working at once. */
  rotate(): string {
    this.#retired.add(this.#key);
    this.#key = this.#newKey();
    this.#keyId = this.#prng.uuid();
    return this.#key;
  }

  check(header: string | undefined): AuthResult {
    const reason = this.#reject(header);
    if (reason === null) return { ok: true };
    this.#rejected[reason] += 1;
    return { ok: false, reason };
  }

  get rejected(): Readonly<Record<KeyRejection, number>> {
    return { ...this.#rejected };
  }

  setDenied(rules: readonly string[]): void {
    this.#deny = new RequestMatcher(rules);
  }

  get denied(): readonly string[] {
    return this.#deny.rules;
  }

  isDenied(method: string, path: string): boolean {
    return this.#deny.matches(method, path);
  }

  #reject(header: string | undefined): KeyRejection | null {
    if (header === undefined || header.trim() === '') return 'missing';
    const match = BEARER.exec(header);
    const key = match?.[1];
    if (key === undefined || !key.startsWith(API_KEY_PREFIX)) return 'malformed';
    if (key === this.#key) return null;
    return this.#retired.has(key) ? 'rotated' : 'unknown';
  }

  #newKey(): string {
    return API_KEY_PREFIX + this.#prng.token(KEY_BODY_LENGTH);
  }
}

export const REJECTION_MESSAGES: Readonly<Record<KeyRejection, string>> = {
  missing: 'Not authenticated',
  malformed: 'Malformed API key',
  unknown: 'Invalid API key',
  rotated: 'Invalid API key',
};
