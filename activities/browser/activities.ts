import { ApplicationFailure } from '@temporalio/common';
import { Mutex } from 'async-mutex';
import type { ActivityDeps } from '../deps';
import { getBrowserCheckpoint, saveBrowserCheckpoint } from '../store/browser-sessions';
import { getBrowserState, upsertBrowserState } from '../store/browser-states';
import { newId } from '../store/ids';
import type { BrowserCommand, BrowserCommandResult, BrowserTouch, PingResult } from '../../workflows/browser-defs';
import { checkNavigation, fail, mapError, runCommand } from './commands';
import type { GuardPolicy } from './guard-proxy';
import { CapacityError, type BrowserHost, type LiveSession, type SessionOptions, type StorageState } from './host';
import { takeSnapshot } from './snapshot';
import { stateCipher } from './state-crypto';

export interface AcquireInput {
  sessionId: string;
  tenantId: string;
  options: SessionOptions;
  /** Re-open from the session's last checkpoint (its worker died). */
  restore: boolean;
  stateId?: string;
}

export interface AcquireResult {
  workerId: string;
  queue: string;
  url: string;
  title: string;
  refs: string[];
}

export interface CommandInput {
  sessionId: string;
  tenantId: string;
  cmd: BrowserCommand;
  expiresAt: number;
}

/** Commands after which cookies or storage may have changed: the checkpoint is refreshed. */
const MUTATING = new Set(['open', 'action', 'state-load']);
const QUIET_MS = 250;

/**
 * Activities of one browser worker. `browserAcquire` runs on the queue all browser workers share;
 * `browserCommand` and `browserRelease` on this worker's own queue, where its pages live.
 */
export function createBrowserWorkerActivities(o: {
  host: BrowserHost;
  deps: ActivityDeps;
  workerId: string;
  queue: string;
  policy: GuardPolicy;
  /** Tells the session workflow about commands it did not run itself (direct commands), once the session is quiet. */
  touch?: (sessionId: string, touch: BrowserTouch) => Promise<void>;
}) {
  const { host, deps } = o;
  const cipher = stateCipher(deps.config.stateKey);
  // One command at a time per session, whichever way it came (workflow activity or direct endpoint).
  const locks = new Map<string, Mutex>();
  const lockOf = (id: string): Mutex => {
    let m = locks.get(id);
    if (!m) locks.set(id, (m = new Mutex()));
    return m;
  };
  /** When each session's last command ended (or it was opened): its idle time, for the heartbeat and expiry. */
  const lastUsed = new Map<string, number>();

  async function loadState(tenantId: string, stateId: string): Promise<StorageState> {
    const row = await getBrowserState(deps.db, tenantId, { id: stateId });
    if (!row) throw fail('NotFound', 'Saved browser state not found.');
    try {
      return JSON.parse(cipher.open(row.state)) as StorageState;
    } catch (err) {
      throw fail('StateUnreadable', `The saved state cannot be read: ${(err as Error).message}`);
    }
  }

  async function checkpoint(sessionId: string, expiresAt: number, withState: boolean): Promise<void> {
    const live = host.sessions.get(sessionId);
    if (!live) return;
    const state = withState
      ? cipher.seal(JSON.stringify(await live.context.storageState({ indexedDB: true })))
      : undefined;
    await saveBrowserCheckpoint(deps.db, {
      tenantId: live.tenantId,
      id: live.sessionId,
      url: live.page.url(),
      title: await live.page.title().catch(() => ''),
      checkpoint: state,
      expiresAt,
    });
  }

  // A checkpoint (storageState read + write) competes with the page for Chromium, so it runs once
  // the session has been quiet for QUIET_MS after a command, one at a time per session; commands in
  // between coalesce into one checkpoint.
  // Direct commands are told to the session workflow (url, title, refs, idle time) after the
  // checkpoint, coalesced the same way: one signal per quiet period, not one per command.
  const pending = new Map<
    string,
    { timer?: NodeJS.Timeout; expiresAt: number; withState: boolean; direct: boolean; running?: Promise<void> }
  >();
  async function tell(sessionId: string): Promise<void> {
    const live = host.sessions.get(sessionId);
    if (!live || !o.touch) return;
    await o.touch(sessionId, {
      url: live.page.url(),
      title: await live.page.title().catch(() => ''),
      refs: [...live.refs],
      idleMs: Date.now() - (lastUsed.get(sessionId) ?? Date.now()),
    });
  }
  /**
   * A session about to close writes its due checkpoint now (URL and title; the state dies with it): a run
   * that closes its session right after a direct command would otherwise leave the row without its last page.
   */
  async function flushCheckpoint(sessionId: string): Promise<void> {
    const p = pending.get(sessionId);
    if (!p) return;
    if (p.timer) {
      clearTimeout(p.timer);
      p.timer = undefined;
      p.running = (p.running ?? Promise.resolve()).then(() => checkpoint(sessionId, p.expiresAt, false));
    }
    await p.running?.catch((err) =>
      deps.log.warn({ session: sessionId, err: (err as Error).message }, 'browser checkpoint failed'),
    );
    pending.delete(sessionId);
  }
  function queueCheckpoint(sessionId: string, expiresAt: number, withState: boolean, direct: boolean): void {
    const p = pending.get(sessionId) ?? { expiresAt, withState: false, direct: false };
    pending.set(sessionId, p);
    p.expiresAt = expiresAt;
    p.withState ||= withState;
    p.direct ||= direct;
    clearTimeout(p.timer);
    p.timer = setTimeout(() => {
      const { expiresAt: at, withState: ws, direct: d } = p;
      p.withState = false;
      p.direct = false;
      p.running = (p.running ?? Promise.resolve())
        .then(() => checkpoint(sessionId, at, ws))
        .catch((err) => deps.log.warn({ session: sessionId, err: (err as Error).message }, 'browser checkpoint failed'))
        .then(() => (d ? tell(sessionId) : undefined))
        .catch((err) =>
          deps.log.warn({ session: sessionId, err: (err as Error).message }, 'browser session signal failed'),
        )
        .finally(() => {
          if (pending.get(sessionId) === p && !p.withState && !p.direct && p.timer === undefined)
            pending.delete(sessionId);
        });
      p.timer = undefined;
    }, QUIET_MS);
  }

  /** Runs one command under the session's lock; `direct` when it came to the command endpoint, not from the workflow. */
  async function execute(input: CommandInput, direct: boolean): Promise<BrowserCommandResult> {
    const lock = lockOf(input.sessionId);
    return lock.runExclusive(async () => {
      const found = host.sessions.get(input.sessionId);
      // Not here (this worker restarted or Chromium died): the workflow re-opens it from its checkpoint.
      if (!found || found.tenantId !== input.tenantId) {
        if (!found) locks.delete(input.sessionId);
        throw fail('SessionLost', 'The session is not open on this worker.');
      }
      try {
        const result = await runOn(found, input);
        if (input.cmd.op !== 'close')
          queueCheckpoint(input.sessionId, input.expiresAt, MUTATING.has(input.cmd.op), direct);
        return result;
      } finally {
        // A failed command moves the idle deadline too.
        if (host.sessions.has(input.sessionId)) lastUsed.set(input.sessionId, Date.now());
        else lastUsed.delete(input.sessionId);
      }
    });
  }

  async function runOn(found: LiveSession, input: CommandInput): Promise<BrowserCommandResult> {
    let live = found;
    const cmd = input.cmd;
    if (cmd.op === 'state-save') {
      const state = await live.context
        .storageState({ indexedDB: true })
        .catch((err) => Promise.reject(mapError(err, 'Saving the state')));
      const row = await upsertBrowserState(deps.db, {
        id: newId('bst'),
        tenantId: input.tenantId,
        name: cmd.name,
        state: cipher.seal(JSON.stringify(state)),
        encrypted: cipher.encrypted,
        origins: state.origins.length,
        cookies: state.cookies.length,
        sourceSessionId: input.sessionId,
      });
      return { url: live.page.url(), title: await live.page.title().catch(() => ''), state: row };
    }
    if (cmd.op === 'state-load') {
      // A fresh context from the state (setStorageState's helper pages would meet the popup guard), back at the same URL.
      const state = await loadState(input.tenantId, cmd.stateId);
      const url = live.page.url();
      live = await host
        .open(input.sessionId, input.tenantId, live.options, state, true)
        .catch((err) => Promise.reject(mapError(err, 'Loading the state')));
      if (/^https?:/.test(url))
        await live.page
          .goto(url, { timeout: 30_000 })
          .catch((err) => Promise.reject(mapError(err, 'Loading the state')));
      return {
        url: live.page.url(),
        title: await live.page.title().catch(() => ''),
        cookies: state.cookies.length,
        origins: state.origins.length,
      };
    }
    if (cmd.op === 'close') {
      await host.close(input.sessionId);
      return { url: '', title: '' };
    }
    return runCommand(live, cmd, o.policy);
  }

  return {
    async browserAcquire(input: AcquireInput): Promise<AcquireResult> {
      let state: StorageState | undefined;
      let url: string | null = null;
      if (input.restore) {
        const cp = await getBrowserCheckpoint(deps.db, input.tenantId, input.sessionId);
        if (cp?.checkpoint) state = JSON.parse(cipher.open(cp.checkpoint)) as StorageState;
        url = cp?.url ?? null;
      } else if (input.stateId) {
        state = await loadState(input.tenantId, input.stateId);
      }
      let live: LiveSession;
      try {
        live = await host.open(input.sessionId, input.tenantId, input.options, state, input.restore);
      } catch (err) {
        if (err instanceof CapacityError) throw ApplicationFailure.retryable(err.message, 'BrowserCapacity');
        throw fail(
          'BrowserUnavailable',
          `Chromium could not start a session: ${(err as Error).message.split('\n')[0]}`,
        );
      }
      if (url && /^https?:/.test(url)) {
        // Back where the session was; refs are re-established by a snapshot (same page, same refs).
        await checkNavigation(url, o.policy)
          .then(() => live.page.goto(url, { waitUntil: 'load', timeout: 30_000 }))
          .then(() => takeSnapshot(live))
          .catch((err) =>
            deps.log.warn(
              { session: input.sessionId, err: (err as Error).message },
              'browser recovery could not reopen the last URL',
            ),
          );
      }
      lastUsed.set(input.sessionId, Date.now());
      return {
        workerId: o.workerId,
        queue: o.queue,
        url: live.page.url(),
        title: await live.page.title().catch(() => ''),
        refs: [...live.refs],
      };
    },

    /** A command sent by the session workflow (an update, or a retry after the direct path failed). */
    browserCommand(input: CommandInput): Promise<BrowserCommandResult> {
      return execute(input, false);
    },

    /** The session's heartbeat: answered only by the worker that holds the page. */
    async browserPing(input: { sessionId: string; tenantId: string }): Promise<PingResult> {
      const found = host.sessions.get(input.sessionId);
      if (!found || found.tenantId !== input.tenantId || found.page.isClosed())
        throw fail('SessionLost', 'The session is not open on this worker.');
      const busy = locks.get(input.sessionId)?.isLocked() ?? false;
      return { busy, idleMs: busy ? 0 : Date.now() - (lastUsed.get(input.sessionId) ?? Date.now()) };
    },

    async browserRelease(input: { sessionId: string }): Promise<boolean> {
      // After any command in progress, so a closed session never has a command half-run on it.
      const closed = await lockOf(input.sessionId).runExclusive(async () => {
        await flushCheckpoint(input.sessionId);
        return host.close(input.sessionId);
      });
      locks.delete(input.sessionId);
      lastUsed.delete(input.sessionId);
      return closed;
    },

    /** A command the API sent straight to this worker (workers/browser-direct.ts); not an activity. */
    direct(input: CommandInput): Promise<BrowserCommandResult> {
      return execute(input, true);
    },
  };
}

export type BrowserWorkerActivities = Omit<ReturnType<typeof createBrowserWorkerActivities>, 'direct'>;
