/**
 * Real Chromium for browser tests: Debian's `chromium` driven by playwright-core (never a
 * downloaded browser; `.ci/run` installs the Debian package when it is missing). The flags keep
 * Chromium off the network this machine cannot reach, so it starts without stalls.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A fresh browser profile; close the context to end the browser. */
export async function launchChromium(options: { permissions?: string[] } = {}): Promise<BrowserContext> {
  const profile = mkdtempSync(join(tmpdir(), 'uda-chromium-'));
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: FLAGS,
    permissions: options.permissions ?? [],
  });
}
