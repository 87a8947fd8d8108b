/**
 * Does a daemon answer on http.host:http.port? Asks its /readyz (which needs no secret) and reports its state and
 * reasons. A daemon that does not answer is "not running" here: `status` reads the database either way.
 */
import { request } from '../node-http.ts';
import type { Config } from '../config/index.ts';

export const DAEMON_STATES = ['ready', 'not_ready', 'not_running', 'disabled', 'unknown'] as const;
export type DaemonState = (typeof DAEMON_STATES)[number];

export interface DaemonCheck {
  state: DaemonState;
  /** The /readyz URL asked; null when there is nothing to ask (http disabled, port 0). */
  url: string | null;
  /** The daemon's lifecycle state as it reports it (starting, running, draining, ...). */
  agent_state?: string;
  /** Why it is not ready (its own words), or why it could not be asked. */
  reasons: string[];
}

export const DAEMON_PROBE_TIMEOUT_MS = 2 * 1000; // 2 s: it is on this host

/** The address to ask: a wildcard listen address is reached through loopback. */
export function probeHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '::1';
  return host;
}

function readyzUrl(host: string, port: number): string {
  const h = probeHost(host);
  return `http://${h.includes(':') && !h.startsWith('[') ? `[${h}]` : h}:${port}/readyz`;
}

function getJson(url: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', timeout: DAEMON_PROBE_TIMEOUT_MS, headers: { accept: 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          body = null; // not the agent's JSON: judged by the status code alone
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('no answer in time'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end();
  });
}

/** Asks the daemon's /readyz at `url` (or at the configured address). */
export async function checkDaemon(config: Config, url?: string): Promise<DaemonCheck> {
  if (url === undefined) {
    if (!config.http.enabled) return { state: 'disabled', url: null, reasons: ['http.enabled is false: nothing to ask'] };
    if (config.http.port === 0) return { state: 'unknown', url: null, reasons: ['http.port is 0 (a free port): the address is not known'] };
  }
  const target = url ?? readyzUrl(config.http.host, config.http.port);
  try {
    const { status, body } = await getJson(target);
    const b = (body ?? {}) as { ready?: unknown; state?: unknown; reasons?: unknown };
    const reasons = Array.isArray(b.reasons) ? b.reasons.map(String) : [];
    const agentState = typeof b.state === 'string' ? { agent_state: b.state } : {};
    if (status === 200 && b.ready === true) return { state: 'ready', url: target, ...agentState, reasons };
    if (status === 200 || status === 503) return { state: 'not_ready', url: target, ...agentState, reasons };
    return { state: 'unknown', url: target, reasons: [`${target} answered ${status}: is this port used by something else?`] };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ECONNREFUSED') return { state: 'not_running', url: target, reasons: [`nothing answers on ${target}`] };
    const text = error instanceof Error ? error.message : String(error);
    return { state: 'unknown', url: target, reasons: [`${target}: ${text}`] };
  }
}
