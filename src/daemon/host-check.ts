/**
 * Which Host headers the local HTTP server answers to (every path: the console, /healthz, /readyz, /metrics). A web
 * page elsewhere can point a DNS name of its own at this machine and have the visitor's browser read this server as
 * that name (DNS rebinding): the readiness reasons, the metrics and the console's data would leak to that page, also
 * from a container whose port is published on the host's loopback. A request must name this machine instead.
 */
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { isLoopbackHost } from '../config/base-url.ts';

/**
 * The request names this machine: an IP address, localhost, the machine's own name, or a name in
 * http.allowed_hosts. A DNS name of someone else's pointed at this machine is refused (DNS rebinding).
 */
export function hostAllowed(hostHeader: string | undefined, allowed: readonly string[]): boolean {
  let name: string;
  try {
    name = new URL(`http://${hostHeader ?? ''}`).hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  } catch {
    return false;
  }
  if (name === '') return false;
  if (isIP(name) !== 0 || isLoopbackHost(name)) return true;
  const own = hostname().toLowerCase();
  return name === own || name === own.split('.')[0] || allowed.includes(name);
}

/** The answer to a refused Host: what is wrong and what to do, in one sentence. */
export function hostRefusedText(hostHeader: string | undefined): string {
  return `This agent answers to IP addresses, localhost and ${hostname()}; to reach it as ${hostHeader ?? '?'}, add that name to http.allowed_hosts in the agent's config.\n`;
}
