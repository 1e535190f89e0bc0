import { accessSync, constants } from 'node:fs';
import type { Config } from '../../schema/config';

/** The queue every browser worker polls for new sessions and recoveries. */
export function browserQueue(taskQueue: string): string {
  return `${taskQueue}-browser`;
}

/** Why this process cannot host browser sessions, or undefined when it can. */
export function chromiumMissing(config: Config): string | undefined {
  if (config.browser.mode === 'off') return 'SVC_BROWSER is off';
  try {
    accessSync(config.browser.chromiumPath, constants.X_OK);
    return undefined;
  } catch {
    return `Chromium not found at ${config.browser.chromiumPath} (install Debian's chromium or set SVC_CHROMIUM_PATH)`;
  }
}
