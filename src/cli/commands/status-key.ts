/**
 * `status`'s key check: GET /v1/auth/verify with one attempt and a short timeout, like `check`. The message says
 * what is wrong and what to do; it never contains the key. Inside a Retry-After window nothing is sent and nothing
 * waited for: the key is `waiting` (the report's api_wait says until when and why).
 */
import { connectApiWithPacing } from '../../api-from-config.ts';
import { ApiError, ApiTransportError, ApiWaitError, API_ERROR_CODES } from '../../api/errors.ts';
import type { Config } from '../../config/index.ts';
import { createLogger } from '../../log.ts';
import type { KeyCheck } from '../../status/status-report.ts';
import { explainApiError } from '../../api/explain-error.ts';

/** `status` must answer at a glance: a hanging API costs at most this long. */
export const KEY_CHECK_TIMEOUT_MS = 10 * 1000; // 10 s

export async function checkKey(config: Config): Promise<KeyCheck> {
  const base_url = config.api.base_url;
  const logger = createLogger({ level: 'fatal', destination: 2 });
  const api = await connectApiWithPacing({ ...config, api: { ...config.api, timeout_ms: Math.min(config.api.timeout_ms, KEY_CHECK_TIMEOUT_MS) } }, logger, {
    maxAttempts: 1,
    maxGateWaitMs: 0,
  });
  try {
    const result = await api.client.auth.verify();
    return { state: 'ok', base_url, user_id: result.user_id, api_key_id: result.api_key_id };
  } catch (error) {
    const message = explainApiError(error, base_url);
    if (error instanceof ApiWaitError) return { state: 'waiting', base_url, message };
    if (error instanceof ApiError && error.code === API_ERROR_CODES.keyRejected) return { state: 'rejected', base_url, message };
    if (error instanceof ApiTransportError) return { state: 'unreachable', base_url, message };
    return { state: 'error', base_url, message };
  } finally {
    await api.close();
  }
}

