import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--disable-gpu', '--disable-quic'];

/** What the share test needs from a page: open it, evaluate, close. */
export interface PageProbe {
  open(url: string): Promise<void>;
  evaluate<T>(expression: string): Promise<T>;
  /** Uncaught errors and console messages seen so far. */
  events: string[];
  close(): Promise<void>;
}

/**
 * Opens Debian's Chromium headless through playwright-core (never a Playwright browser download).
 */
export async function openBrowser(): Promise<PageProbe> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  const page = await browser.newPage();
  const events: string[] = [];
  page.on('console', (m) => events.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => events.push(`error: ${e.message}`));
  return {
    events,
    open: async (url) => void (await page.goto(url, { waitUntil: 'load' })),
    evaluate: (expression) => page.evaluate(expression),
    close: () => browser.close(),
  };
}
