/**
 * The route table of the Public API: all 33 operations of the spec. Removed endpoints (/v1/product_variants/*)
 * are not in it, so they answer 404 exactly like a route that never existed (the server counts them separately).
 */
import { addApprovedPriceRoutes } from './approved-prices-routes.ts';
import { addGridRoutes } from './grid-routes.ts';
import { NOT_FOUND, invalid, json } from './http-io.ts';
import { addRecordRoutes } from './record-routes.ts';
import { parsePathId } from './resource.ts';
import { Router } from './router.ts';
import type { ApiContext } from './world.ts';

export const REMOVED_PREFIX = '/v1/product_variants';

/** The same id with the variant bits of the Microsoft GUID variant (110x): UUID-shaped, not RFC 4122. */
function otherVariant(uuid: string): string {
  return `${uuid.slice(0, 19)}c${uuid.slice(20)}`;
}

export function buildApiRouter(): Router<ApiContext> {
  const router = new Router<ApiContext>();
  router.add('GET', '/v1/auth/verify', 'none', ({ world }) => {
    const id = world.dialect.verifyIds === 'rfc4122' ? (uuid: string) => uuid : otherVariant;
    return json(200, { ok: true, user_id: id(world.keys.userId), api_key_id: id(world.keys.keyId) });
  });
  addRecordRoutes(router);
  addGridRoutes(router);
  addApprovedPriceRoutes(router);
  router.add('POST', '/v1/transactions/exports/:export_id/cancel', 'none', ({ world, params }) => {
    const exportId = parsePathId('uuid', params.export_id ?? '', 'export_id');
    if (Array.isArray(exportId)) return invalid(exportId);
    const record = world.exports.get(String(exportId));
    return record ? json(200, world.exports.cancel(record)) : NOT_FOUND;
  });
  return router;
}
