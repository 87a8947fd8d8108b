/**
 * One sentence a retail IT person can act on, for the ways talking to the API fails: what is wrong and what to do.
 * Used by `check`, by every command that reports an API failure, and by the daemon when it cannot verify its key.
 */
import { ApiError, ApiTransportError, API_ERROR_CODES } from './errors.ts';
import { TLS_ERROR_CODES } from './retry-policy.ts';

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

/** The deepest error with a code in a cause chain (undici wraps the system error), and that code. */
function rootFailure(error: unknown): { code?: string; failure?: object } {
  let found: { code?: string; failure?: object } = {};
  let current: unknown = error;
  for (let depth = 0; current && typeof current === 'object' && depth < 6; depth += 1) {
    const c = (current as { code?: unknown }).code;
    if (typeof c === 'string') found = { code: c, failure: current };
    current = (current as { cause?: unknown }).cause;
  }
  return found;
}

/**
 * OpenSSL's answer when what came back is not TLS at all: a server that speaks plain HTTP on that port answers the
 * client's hello with an HTTP error page, whose first bytes read as a record of an unknown version.
 */
const NOT_TLS_CODES: ReadonlySet<string> = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_HTTP_REQUEST', 'ERR_SSL_PACKET_LENGTH_TOO_LONG']);

/** The names a certificate is for (`DNS:a, DNS:b` from Node's altname check), or null when the error does not say. */
function certificateNames(failure: object | undefined): string | null {
  const names = (failure as { cert?: { subjectaltname?: unknown } } | undefined)?.cert?.subjectaltname;
  if (typeof names === 'string' && names !== '') return names.replaceAll('DNS:', '').replaceAll('IP Address:', '');
  const reason = (failure as { reason?: unknown } | undefined)?.reason;
  const listed = typeof reason === 'string' ? /altnames: (.+)$/.exec(reason)?.[1] : undefined;
  return listed === undefined ? null : listed.replaceAll('DNS:', '').replaceAll('IP Address:', '');
}

function tlsSentence(code: string, failure: object | undefined, baseUrl: string): string {
  if (NOT_TLS_CODES.has(code)) {
    return `${baseUrl} answered in plain HTTP, not TLS (${code}): check the host and port in api.base_url; the API is reached with https://.`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const host = new URL(baseUrl).hostname;
    const names = certificateNames(failure);
    return `The TLS certificate of ${baseUrl} is not for the host ${host} but for ${names ?? 'other names'}: write api.base_url with a name the certificate is for, or have the server's certificate issued for ${host}.`;
  }
  return `The TLS certificate of ${baseUrl} is not trusted (${code}): if your network inspects TLS, put its CA certificate in api.ca_file; never turn verification off.`;
}

export function explainApiError(error: unknown, baseUrl: string): string {
  if (error instanceof ApiTransportError) {
    const root = rootFailure(error.cause);
    const code = root.code ?? error.transportCode ?? 'error';
    if (TLS_ERROR_CODES.has(code) || NOT_TLS_CODES.has(code)) return tlsSentence(code, root.failure, baseUrl);
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
