import { createRequire } from 'node:module';

/** The agent's version, from package.json (sent in the User-Agent and printed by --version). */
export const AGENT_VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
