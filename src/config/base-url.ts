/**
 * The API base URL rule: https only, because the bearer key travels in every request; plain http is allowed for
 * loopback hosts (127.0.0.0/8, ::1, localhost), where the sandbox and test servers run and nothing crosses a
 * network. The URL is normalised (lowercase scheme and host, no trailing slash) so the client can append `/v1/...`.
 */

/** True for `localhost`, any 127.x.y.z address and `::1` (with or without brackets). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (host === 'localhost' || host === '::1') return true;
  const octets = host.split('.');
  return (
    octets.length === 4 &&
    octets[0] === '127' &&
    octets.every((octet) => /^\d{1,3}$/.test(octet) && Number(octet) <= 255)
  );
}

export type BaseUrlResult = { readonly ok: true; readonly url: string } | { readonly ok: false; readonly message: string };

/**
 * Checks and normalises a base URL. The messages never quote the URL (it could carry credentials) and say what
 * to write instead.
 */
export function normaliseBaseUrl(value: string): BaseUrlResult {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return { ok: false, message: 'is not a URL (expected https://host or https://host/prefix)' };
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    return {
      ok: false,
      message:
        'must use https:// (the API key is sent with every request); http:// is only allowed for loopback hosts (127.0.0.0/8, ::1, localhost)',
    };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { ok: false, message: `must be an https:// URL, not ${url.protocol}//` };
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, message: 'must not contain a user name or password (the API key goes in api.key)' };
  }
  if (url.search !== '' || url.hash !== '') {
    return { ok: false, message: 'must not contain a query (?...) or fragment (#...)' };
  }
  const path = url.pathname.replace(/\/+$/, '');
  // The agent writes every path with its version (/v1/...): a base URL that has it already asks for /v1/v1/...,
  // which the server answers 404 for every call.
  if (/\/v\d+$/i.test(path)) {
    return { ok: false, message: `ends in ${path.slice(path.lastIndexOf('/'))}: leave it out (write ${url.protocol}//${url.host}${path.slice(0, path.lastIndexOf('/'))}); the agent adds /v1 to every request itself` };
  }
  return { ok: true, url: `${url.protocol}//${url.host}${path}` };
}
