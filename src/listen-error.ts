/**
 * A server that could not listen (the daemon's HTTP server, the feed, the sandbox), in one sentence that names the
 * setting to change: a port another program holds, an address that is not this machine's, a port below 1024.
 * Node's own message (`listen EADDRINUSE: address already in use 127.0.0.1:9464`) names neither.
 */
export function listenError(error: unknown, host: string, port: number, setting: string): Error {
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch ((error as NodeJS.ErrnoException).code) {
    case 'EADDRINUSE':
      return new Error(`${address} is already in use by another program: stop it, or set ${setting} to another port`, { cause: error });
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new Error(`${address}: ${host} is not an address of this machine: set ${setting} to one of its addresses (0.0.0.0 for all)`, { cause: error });
    case 'EACCES':
      return new Error(`${address}: a port below 1024 needs privileges the agent does not have: set ${setting} to a port from 1024 up`, { cause: error });
    default:
      return error instanceof Error ? error : new Error(String(error));
  }
}
