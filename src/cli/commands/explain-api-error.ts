/**
 * One sentence a retail IT person can act on, for the ways talking to the API fails: what is wrong and what to do.
 * Used by `check` and by every command that reports an API failure.
 */
import { ApiError, ApiTransportError, API_ERROR_CODES } from '../../api/errors.ts';
import { TLS_ERROR_CODES } from '../../api/retry-policy.ts';

const NETWORK_HINTS: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved right now',
  ETIMEDOUT: 'the connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'the server did not answer in time (api.timeout_ms)',
  ECONNRESET: 'the connection was reset',
  UND_ERR_SOCKET: 'the connection was closed by the other side',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
};

/** The deepest error code in a cause chain (undici wraps the system error). */
function rootCode(error: unknown): string | undefined {
  let code: string | undefined;
  let current: unknown = error;
  for (let depth = 0; current && typeof current === 'object' && depth < 6; depth += 1) {
    const c = (current as { code?: unknown }).code;
    if (typeof c === 'string') code = c;
    current = (current as { cause?: unknown }).cause;
  }
  return code;
}

export function explainApiError(error: unknown, baseUrl: string): string {
  if (error instanceof ApiTransportError) {
    const code = rootCode(error.cause) ?? error.transportCode ?? 'error';
    if (TLS_ERROR_CODES.has(code)) {
      return `The TLS certificate of ${baseUrl} is not trusted (${code}): if your network inspects TLS, put its CA certificate in api.ca_file; never turn verification off.`;
    }
    const hint = NETWORK_HINTS[code] ?? `the request failed (${code})`;
    return `Cannot reach the API at ${baseUrl}: ${hint}; check api.base_url, the proxy settings (api.proxy, HTTPS_PROXY) and the firewall.`;
  }
  if (error instanceof ApiError) {
    if (error.code === API_ERROR_CODES.keyRejected) return error.message;
    if (error.code === API_ERROR_CODES.forbidden) {
      return 'The API key is valid but has no access to this resource (403): ask the platform administrator for access.';
    }
    if (error.code === API_ERROR_CODES.serverError) {
      return `The API at ${baseUrl} answered with a server error (${String(error.status)}): try again later; if it persists, contact the platform's support.`;
    }
    if (error.code === API_ERROR_CODES.badResponse || error.code === API_ERROR_CODES.notFound) {
      return `${baseUrl} does not answer like the Pricing Data Public API (${error.message}): check api.base_url.`;
    }
    return error.message;
  }
  return error instanceof Error ? error.message : String(error);
}
