/**
 * The config module's public surface. Other modules import from here, not from the files behind it.
 */
export { loadConfig, DEFAULT_CONFIG_FILE } from './load-config.ts';
export type { LoadConfigOptions } from './load-config.ts';
export type { Config, DeepReadonly } from './schema.ts';
export type { ApiConfig } from './api-schema.ts';
export { maxRetryAfterMs } from './api-schema.ts';
export { ConfigError, formatProblem } from './errors.ts';
export type { ConfigProblem } from './errors.ts';
export type { Env } from './interpolate.ts';
export { readApiKey } from './api-key.ts';
export { caCertificates } from './ca.ts';
export { proxyFor } from './proxy.ts';
export { isLoopbackHost } from './base-url.ts';
export { redactConfig } from './redact.ts';
