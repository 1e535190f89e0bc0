import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { Logger } from 'pino';
import { startGuardProxy, type GuardPolicy, type GuardProxy } from './guard-proxy';

/** Flags beyond those Playwright already passes (headless, no-sandbox, no background networking, no sync, no first run). */
export const CHROMIUM_ARGS = [
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export interface SessionOptions {
  viewport?: { width: number; height: number };
  locale?: string;
  timezone?: string;
  user_agent?: string;
}

export type StorageState = Awaited<ReturnType<BrowserContext['storageState']>>;

/** One open session on this worker: its own context, page and guard proxy. */
export interface LiveSession {
  sessionId: string;
  tenantId: string;
  options: SessionOptions;
  context: BrowserContext;
  page: Page;
  proxy: GuardProxy;
  /** Text and refs of the last snapshot, and the navigation count it was taken at. */
  lastSnapshot: string;
  refs: Set<string>;
  snapshotNav: number;
  navigations: number;
  popupsClosed: number;
  downloadsRefused: number;
}

export class CapacityError extends Error {}

/**
 * One Chromium per browser worker (launched on first use, relaunched if it dies), one
 * BrowserContext per session: cookies, storage, cache and permissions never cross sessions.
 */
export class BrowserHost {
  readonly sessions = new Map<string, LiveSession>();
  private browser?: Promise<Browser>;
  private stopping = false;

  constructor(private readonly o: { chromiumPath: string; policy: GuardPolicy; maxSessions: number; log: Logger }) {}

  get capacity(): number {
    return this.o.maxSessions;
  }

  private launch(): Promise<Browser> {
    if (!this.browser) {
      this.browser = chromium.launch({ executablePath: this.o.chromiumPath, args: CHROMIUM_ARGS });
      this.browser.then(
        (b) =>
          b.on('disconnected', () => {
            if (!this.stopping) this.o.log.warn('chromium disconnected; sessions on this worker are lost');
            this.browser = undefined;
            for (const s of this.sessions.values()) void s.proxy.close();
            this.sessions.clear();
          }),
        () => (this.browser = undefined),
      );
    }
    return this.browser;
  }

  async version(): Promise<string> {
    return (await this.launch()).version();
  }

  /**
   * Opens (or re-opens, replacing any old context) a session's context, optionally from a saved
   * storage state. Idempotent per session id when `replace` is false.
   * @throws CapacityError when this worker already holds its maximum of sessions
   */
  async open(
    sessionId: string,
    tenantId: string,
    options: SessionOptions,
    state?: StorageState,
    replace = false,
  ): Promise<LiveSession> {
    const existing = this.sessions.get(sessionId);
    if (existing && !replace) return existing;
    if (!existing && this.sessions.size >= this.o.maxSessions)
      throw new CapacityError(`This browser worker already holds ${this.o.maxSessions} sessions.`);
    if (existing) await this.close(sessionId);
    const browser = await this.launch();
    const proxy = await startGuardProxy(this.o.policy);
    let context: BrowserContext;
    try {
      context = await browser.newContext({
        proxy: { server: proxy.server },
        acceptDownloads: false,
        serviceWorkers: 'block',
        viewport: options.viewport ?? { width: 1280, height: 800 },
        locale: options.locale,
        timezoneId: options.timezone,
        userAgent: options.user_agent,
        storageState: state,
      });
    } catch (err) {
      await proxy.close();
      throw err;
    }
    const page = await context.newPage();
    const live: LiveSession = {
      sessionId,
      tenantId,
      options,
      context,
      page,
      proxy,
      lastSnapshot: '',
      refs: new Set(),
      snapshotNav: -1,
      navigations: 0,
      popupsClosed: 0,
      downloadsRefused: 0,
    };
    // New windows are contained: closed at once (their requests already went through the guard).
    context.on('page', (p) => {
      if (p === page) return;
      live.popupsClosed++;
      void p.close().catch(() => {});
    });
    page.on('download', () => live.downloadsRefused++);
    page.on('dialog', (d) => void d.dismiss().catch(() => {}));
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) live.navigations++;
    });
    this.sessions.set(sessionId, live);
    return live;
  }

  async close(sessionId: string): Promise<boolean> {
    const s = this.sessions.get(sessionId);
    if (!s) return false;
    this.sessions.delete(sessionId);
    await s.context.close().catch(() => {});
    await s.proxy.close();
    return true;
  }

  async shutdown(): Promise<void> {
    this.stopping = true;
    for (const id of [...this.sessions.keys()]) await this.close(id);
    const b = this.browser;
    this.browser = undefined;
    if (b) await (await b.catch(() => undefined))?.close().catch(() => {});
  }
}
