/**
 * Which acknowledge body the server takes. The document says "list of up to 500 approval ids" and names no field,
 * so three readings are plausible (ACK_BODY_SHAPES): `{"approval_ids": [...]}`, `{"ids": [...]}` and the bare list.
 * The agent sends the first; on a 422 that says the body's shape is wrong (ackRefusalOf: every problem about the
 * body or one of its fields, none about an id) it tries the next, and the one the server accepts is remembered in
 * the state database (api_facts) and used from then on, by every process. A 422 refuses the whole request, so
 * nothing was acknowledged by a refused shape and trying another cannot acknowledge an id twice.
 *
 * A remembered shape the server starts refusing (the platform changed) is forgotten and the readings are tried
 * again. When the server refuses every reading, the first refusal is thrown: the ids stay pending, the pull says so.
 */
import { ApiError, API_ERROR_CODES } from '../api/errors.ts';
import { ackRefusalOf, type AckResponse } from '../api/resources/approved-prices.ts';
import { ACK_BODY_SHAPES, type AckBodyShape } from '../api/schemas/index.ts';
import { API_FACTS, apiFact, forgetApiFact, recordApiFact } from '../store/api-state.ts';
import type { PullDeps } from './pull-deps.ts';

export async function rememberedShape(deps: PullDeps): Promise<AckBodyShape | null> {
  const value = await apiFact(deps.db, API_FACTS.ackBodyShape);
  return ACK_BODY_SHAPES.find((shape) => shape === value) ?? null;
}

/** Sends one acknowledge with the body shape the server takes, finding it out first when it is not known yet. */
export async function sendAcknowledge(deps: PullDeps, ids: readonly number[], signal: AbortSignal | undefined): Promise<AckResponse> {
  const remembered = await rememberedShape(deps);
  const candidates = remembered === null ? ACK_BODY_SHAPES : [remembered, ...ACK_BODY_SHAPES.filter((s) => s !== remembered)];
  let firstRefusal: unknown = null;
  const understood = async (shape: AckBodyShape) => {
    if (shape === remembered) return;
    await recordApiFact(deps.db, API_FACTS.ackBodyShape, shape);
    deps.logger.info({ shape }, 'acknowledge: the server takes this body shape; remembered');
  };
  for (const shape of candidates) {
    try {
      const response = await deps.client.approvedPrices.acknowledge(ids, { shape, signal });
      await understood(shape);
      return response;
    } catch (error) {
      const refusal = ackRefusalOf(error);
      if (refusal.kind !== 'shape') {
        // A 409, or a 422 about particular ids: the server read the ids, so it takes this shape.
        if (refusal.kind === 'ids' || (error instanceof ApiError && error.code === API_ERROR_CODES.conflict)) await understood(shape);
        throw error;
      }
      firstRefusal ??= error;
      if (shape === remembered) {
        await forgetApiFact(deps.db, API_FACTS.ackBodyShape);
        deps.logger.warn({ shape }, 'acknowledge: the server no longer takes the remembered body shape; trying the others');
      }
    }
  }
  throw firstRefusal;
}
