import type { ActivityDeps } from '../deps';
import { setBrowserStatus, type BrowserStatus } from '../store/browser-sessions';

/** Session status writes of the session workflow; they run on the main queue (no browser needed). */
export function createBrowserStoreActivities(deps: ActivityDeps) {
  return {
    async browserSetStatus(s: {
      tenantId: string;
      id: string;
      status: BrowserStatus;
      workerId?: string | null;
      error?: string | null;
      recovered?: boolean;
    }): Promise<void> {
      await setBrowserStatus(deps.db, s);
    },
  };
}

export type BrowserStoreActivities = ReturnType<typeof createBrowserStoreActivities>;
