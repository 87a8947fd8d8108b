/**
 * Whether the agent is ready to work, and why not: what /readyz answers (src/daemon/http-server.ts) and the console
 * shows. Here, not in daemon/, because the console reads it and takes no type from the daemon.
 */
import type { ApiWaitView } from './api-wait.ts';

export interface Readiness {
  ready: boolean;
  reasons: string[];
  /** With ha.enabled: this node's role and name (a healthy standby is ready too). */
  role?: 'active' | 'standby';
  node?: string;
  /** A Retry-After window the API gave: shown, not a reason to be unready (the agent does what it was asked). */
  api_wait?: ApiWaitView;
}
