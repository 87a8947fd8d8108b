/**
 * The system's Chromium (Debian's `chromium` package), driven by playwright-core, for the console's browser test and
 * `npm run screenshots`. playwright-core downloads no browser: it starts the one at CHROMIUM_PATH, else the first of
 * the usual places. The flags are the ones that work as root in a container with no display and no network
 * (library-notes.md, "Browser tests"). `.ci/run` installs the package when it is missing.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];

/** The Chromium to drive, or undefined when this machine has none. */
export function chromiumPath(): string | undefined {
  const configured = process.env['CHROMIUM_PATH'];
  if (configured !== undefined && configured !== '') return configured;
  return CANDIDATES.find((path) => existsSync(path));
}

export async function launchChromium(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (executablePath === undefined) {
    throw new Error(`no Chromium found (${CANDIDATES.join(', ')}): apt-get install chromium, or set CHROMIUM_PATH`);
  }
  return chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}
