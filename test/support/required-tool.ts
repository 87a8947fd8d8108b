/**
 * Tests that need a tool from outside npm (Chromium, promtool, systemd-analyze, shellcheck, PostgreSQL's server):
 * on a developer's machine without it they are skipped, with the reason in their name; under CI=true a missing tool
 * is a failure, because .ci/run installs each, and a CI run that passed by skipping would prove nothing.
 */
import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';

const inCi = process.env['CI'] === 'true';

/** Whether `command` runs here (`command -v`). */
export function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v '${command}'`], { stdio: 'ignore' }).status === 0;
}

/**
 * Whether the tests that need `tool` should be skipped here. `present`: whether it is. Under CI=true a missing tool
 * adds a failing test (in the scope of the call) naming the Debian package .ci/run installs it from.
 */
export function skipWithout(tool: string, present: boolean, debianPackage: string): boolean {
  if (present) return false;
  if (inCi) {
    it(`${tool} is installed (CI must not pass by skipping)`, () => {
      expect.fail(`${tool} is missing: .ci/run installs it with apt-get install ${debianPackage}; see its output`);
    });
  }
  return true;
}
