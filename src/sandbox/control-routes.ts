/**
 * The control plane over HTTP, under /_sandbox/ on the API's own port, without the API key (it is a test tool:
 * bind the sandbox to loopback). Every route calls the SandboxControl method of the same name; docs/sandbox.md
 * lists them with their bodies.
 */
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { EXPORT_STATUSES, toValidationErrors } from '../api/schemas/index.ts';
import { AmendApproval, ControlError, InjectApprovals, type SandboxControl } from './control.ts';
import { FaultConfig } from './faults.ts';
import { RateLimitConfig } from './rate-limit.ts';
import { NOT_FOUND, NO_CONTENT, detail, invalid, json, readJsonBody, type Reply } from './http-io.ts';
import { Router, type RequestContext } from './router.ts';

const MAX_CONTROL_BODY = 1024 * 1024; // 1 MiB

const AccessBody = z.strictObject({ deny: z.array(z.string().min(1)) });
const AckConflictsBody = z.strictObject({ include_conflicts: z.boolean() });
const ExportBody = z.strictObject({ status: z.enum(EXPORT_STATUSES) });

function approvalId(ctx: RequestContext): number {
  const raw = ctx.params.id ?? '';
  if (!/^\d{1,15}$/.test(raw)) throw new ControlError(422, `approval id must be an integer, got '${raw}'`);
  return Number(raw);
}

function routes(control: SandboxControl): Router<RequestContext> {
  const memory = (): Reply => {
    const usage = process.memoryUsage();
    return json(200, { rss_bytes: usage.rss, heap_used_bytes: usage.heapUsed, external_bytes: usage.external });
  };
  return new Router<RequestContext>()
    .add('GET', '/_sandbox/state', 'none', ({ query }) => json(200, control.state({ keys: query.get('keys') !== 'false' })))
    .add('GET', '/_sandbox/memory', 'none', memory)
    .add('POST', '/_sandbox/reset', 'none', () => {
      control.reset();
      return json(200, { api_key: control.apiKey });
    })
    .add('POST', '/_sandbox/approvals', 'json', ({ body }) => json(201, { items: control.injectApprovals(InjectApprovals.parse(body ?? {})) }))
    .add('POST', '/_sandbox/approvals/:id/amend', 'json', (ctx) => json(201, control.amend(approvalId(ctx), AmendApproval.parse(ctx.body ?? {}))))
    .add('POST', '/_sandbox/approvals/:id/cancel', 'none', (ctx) => json(200, control.cancel(approvalId(ctx))))
    .add('POST', '/_sandbox/rotate-key', 'none', () => {
      const apiKey = control.rotateKey();
      return json(200, { api_key: apiKey, api_key_id: control.world.keys.keyId });
    })
    .add('PUT', '/_sandbox/rate-limit', 'json', ({ body }) => {
      control.setRateLimit(RateLimitConfig.parse(body));
      return json(200, { config: control.world.rateLimiter.config });
    })
    .add('DELETE', '/_sandbox/rate-limit', 'none', () => {
      control.setRateLimit(null);
      return NO_CONTENT;
    })
    .add('PUT', '/_sandbox/faults', 'json', ({ body }) => {
      control.setFaults(FaultConfig.parse(body));
      return json(200, { config: control.world.faults.config });
    })
    .add('DELETE', '/_sandbox/faults', 'none', () => {
      control.setFaults(null);
      return NO_CONTENT;
    })
    .add('PUT', '/_sandbox/access', 'json', ({ body }) => {
      control.setDenied(AccessBody.parse(body).deny);
      return json(200, { deny: control.world.keys.denied });
    })
    .add('PUT', '/_sandbox/ack-conflicts', 'json', ({ body }) => {
      const { include_conflicts: include } = AckConflictsBody.parse(body);
      control.setAckConflictDetail(include);
      return json(200, { include_conflicts: include });
    })
    .add('POST', '/_sandbox/exports', 'json', ({ body }) => json(201, control.addExport(ExportBody.parse(body).status)));
}

export type ControlDispatch = (method: string, path: string, query: URLSearchParams, req: IncomingMessage) => Promise<Reply>;

export function buildControlRouter(control: SandboxControl): ControlDispatch {
  const router = routes(control);
  return async (method, path, query, req) => {
    const match = router.match(method, path);
    if (match.kind === 'not_found') return NOT_FOUND;
    if (match.kind === 'method_not_allowed') return detail(405, 'Method Not Allowed', { allow: match.allow.join(', ') });
    let body: unknown;
    if (match.route.body === 'json') {
      const parsed = await readJsonBody(req, MAX_CONTROL_BODY);
      if (!parsed.ok) return parsed.reply;
      body = parsed.value;
    }
    try {
      return await match.route.handler({ params: match.params, query, body, req });
    } catch (error) {
      if (error instanceof ControlError) return detail(error.status, error.message);
      if (error instanceof z.ZodError) return invalid(toValidationErrors(error, ['body']));
      throw error;
    }
  };
}
