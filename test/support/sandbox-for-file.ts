/**
 * A small sandbox (no seeded approvals, no large grid) on the real clock, with one undici Agent to reach it, for
 * every test of a file: started in beforeAll, the Agent and then the sandbox closed in afterAll.
 */
import { Agent } from 'undici';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.ts';
import { openForFile } from './open-for-file.ts';

export function sandboxWithAgentForFile(agent: Agent.Options = {}): { readonly sandbox: SandboxHandle; readonly dispatcher: Agent } {
  return openForFile(async () => {
    const sandbox = await startSandbox({ approvals: 0, largeGridRows: 0 });
    const dispatcher = new Agent(agent);
    return {
      sandbox,
      dispatcher,
      async close() {
        await dispatcher.close();
        await sandbox.close();
      },
    };
  });
}
