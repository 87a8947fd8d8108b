/**
 * The `ha:` section (issue 15): two or more agents sharing one PostgreSQL state and the same inbox folders elect one
 * active node through a lease in the database (src/store/ha-lease.ts, src/daemon/ha-coordinator.ts); the others
 * stand by. docs/ha.md.
 */
import { hostname } from 'node:os';
import { z } from 'zod';
import type { SectionContext } from './section-context.ts';

/** A node name as status and the lease show it: the host name by default. */
const NODE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

export function haSchema(_ctx: SectionContext) {
  return z.strictObject({
    /** Take part in an active/standby pair (needs state.backend: postgres). */
    enabled: z.boolean().default(false),
    /** This node's name in the lease and in status; unique within the pair. */
    node_name: z
      .string()
      .regex(NODE_NAME, 'letters, digits, ".", "_" and "-", at most 63, starting with a letter or digit')
      .default(() => hostname().split('.')[0] || 'node'),
    /** How long the active's lease lasts without a renewal (s); it renews every lease_s / 3. A standby takes over
     * within lease_s plus one try (lease_s / 3) of the active's death. */
    lease_s: z.int().min(3).max(120).default(10),
  });
}
