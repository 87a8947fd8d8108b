/**
 * The `http:` and `daemon:` sections: the local health/metrics server and the long-running process's bounds.
 */
import { z } from 'zod';
import type { SectionContext } from './section-context.ts';

export function httpSchema(_ctx: SectionContext) {
  return z.strictObject({
    /** Serve /healthz, /readyz and /metrics. */
    enabled: z.boolean().default(true),
    /**
     * Address to listen on. Loopback by default: the endpoints expose no secret, but nothing outside this host
     * needs them unless a monitoring system scrapes it; then set the host's address (or 0.0.0.0) deliberately.
     */
    host: z
      .string()
      .min(1)
      // `0.0.0.0:9464` validated and then failed at start with getaddrinfo ENOTFOUND: the port has its own key.
      .refine((host) => !/^[^:]*:\d*$/.test(host) && !host.startsWith('['), {
        error: 'an address without a port or brackets (e.g. 127.0.0.1, 0.0.0.0 or ::): the port goes in http.port',
      })
      .default('127.0.0.1'),
    /** 9464 is the conventional port of Prometheus exporters' "app" range; 0 picks a free port (tests). */
    port: z.int().min(0).max(65_535).default(9464),
    /** Serve the read-only web console at / (files, reports and rejects: the data of this agent's files). */
    console: z.boolean().default(true),
    /**
     * Host names the local HTTP server (console, /healthz, /readyz, /metrics) answers to besides IP addresses,
     * localhost and this machine's own name: a request naming any other host is refused (421), so that a web page
     * cannot read it through a DNS name of its own pointed at this machine (DNS rebinding; src/daemon/host-check.ts).
     */
    allowed_hosts: z.array(z.string().min(1).max(253).transform((h) => h.toLowerCase())).max(100).default([]),
  });
}

export function daemonSchema(_ctx: SectionContext) {
  return z.strictObject({
    /** On SIGTERM/SIGINT: how long to let work in flight finish and checkpoint before exiting anyway (ms). */
    shutdown_timeout_ms: z.int().min(1_000).max(600_000).default(30_000), // 30 s
    /** While the API rejects the key (401): how often to check the key again, re-reading api.key_file (ms). */
    key_check_interval_ms: z.int().min(1_000).max(3_600_000).default(60_000), // 1 min
  });
}
