import pino from 'pino';
import { startHarness, testEnv, type Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { startBrowserWorkers, type BrowserWorkers } from '../../workers/browser-worker';
import { startPageServer, type PageServer } from './pages';

export interface BrowserFixture {
  h: Harness;
  pages: PageServer;
  /** The in-process browser worker (undefined when `browserWorker: false`). */
  bw?: BrowserWorkers;
  key: string;
  tenantId: string;
  /** Creates a session and fails the test unless it opened. */
  session(key?: string, body?: Record<string, unknown>): Promise<string>;
  open(id: string, path: string, key?: string): Promise<{ status: number; body: any }>;
  snapshot(id: string, key?: string, extra?: string): Promise<{ status: number; body: any }>;
  act(
    id: string,
    body: Record<string, unknown>,
    key?: string,
  ): Promise<{ status: number; body: any; headers: Headers }>;
}

/** Finds the ref of the first snapshot line that matches, e.g. refOf(text, /button "Submit"/). */
export function refOf(text: string, line: RegExp): string {
  const hit = text.split('\n').find((l) => line.test(l));
  const m = hit && /\[ref=([a-z0-9]+)\]/.exec(hit);
  if (!m) throw new Error(`no ref for ${line} in:\n${text.slice(0, 3000)}`);
  return m[1];
}

/**
 * The app, a main worker and (unless `browserWorker: false`) a browser worker in this process, plus a
 * loopback page server. The fetch guard stays on (no SVC_ALLOW_PRIVATE_FETCH): only the page server's
 * host:port is allow-listed, so every other private address is refused as in production.
 */
export function withBrowser(
  opts: { env?: Record<string, string>; browserWorker?: boolean },
  ready: (f: BrowserFixture) => void,
): void {
  const f: Partial<BrowserFixture> = {};
  const opened: Array<[string, string]> = [];
  beforeAll(async () => {
    f.pages = await startPageServer();
    const h = await startHarness({ worker: true, env: { SVC_BROWSER_ALLOW_HOSTS: f.pages.host, ...opts.env } });
    f.h = h;
    if (opts.browserWorker !== false) {
      f.bw = await startBrowserWorkers({
        config: h.config,
        db: h.db,
        log: pino({ level: 'silent' }),
        address: testEnv().temporalAddress,
        taskQueue: h.taskQueue,
      });
    }
    const k = await h.key(['runtime:workspaces']);
    f.key = k.apiKey;
    f.tenantId = k.tenantId;
    // The browser worker is started once Temporal lists it among the queue's pollers (its first poll reaches the
    // server a moment after it starts; health read before then says no worker is polling).
    if (f.bw)
      await pollUntil(
        () => h.req('GET', '/v1/browser/health', { key: k.apiKey }),
        (r) => r.body.workers >= 1,
        60_000,
      );
    f.session = async (key = f.key!, body = {}) => {
      const r = await h.req('POST', '/v1/browser/sessions', { key, body });
      if (r.status !== 200 || r.body.status !== 'open') throw new Error(`session not opened: ${r.status} ${r.text}`);
      opened.push([r.body.id, key]);
      return r.body.id as string;
    };
    f.open = (id, path, key = f.key!) =>
      h.req('POST', '/v1/browser/open', { key, body: { session_id: id, url: f.pages!.url + path } });
    f.snapshot = (id, key = f.key!, extra = '') =>
      h.req('GET', `/v1/browser/snapshot?session_id=${id}${extra}`, { key });
    f.act = (id, body, key = f.key!) => h.req('POST', '/v1/browser/action', { key, body: { session_id: id, ...body } });
    ready(f as BrowserFixture);
  }, 120_000);
  // Each test closes what it opened, so the per-tenant cap never carries over.
  afterEach(async () => {
    for (const [id, key] of opened.splice(0)) await f.h!.req('DELETE', `/v1/browser/sessions/${id}`, { key });
  }, 60_000);
  afterAll(async () => {
    await f.bw?.stop();
    await f.h?.close();
    await f.pages?.close();
  }, 60_000);
}
