import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  setHandler,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import type { AcquireResult, BrowserWorkerActivities } from '../activities/browser/activities';
import type { BrowserStoreActivities } from '../activities/browser/store-activities';
import {
  browserAwaitOpenUpdate,
  browserCommandUpdate,
  browserStateQuery,
  browserTouchedSignal,
  isEndedStatus,
  type BrowserCommand,
  type BrowserCommandResult,
  type BrowserSessionInput,
  type BrowserSessionStatus,
} from './browser-defs';

const store = proxyActivities<BrowserStoreActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { maximumAttempts: 10, initialInterval: '200 ms' },
});
const MAX_REFS = 2000;

/** A worker that polls no more (killed, or its Chromium died) shows up as a timeout or SessionLost. */
function workerLost(err: unknown): boolean {
  if (!(err instanceof ActivityFailure)) return false;
  const cause = err.cause;
  return cause instanceof TimeoutFailure || (cause instanceof ApplicationFailure && cause.type === 'SessionLost');
}

/** The activity's typed failure, re-thrown so the API sees its type (an update must fail with an ApplicationFailure). */
function asFailure(err: unknown): ApplicationFailure {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure)
    return ApplicationFailure.nonRetryable(cause.message, cause.type ?? 'BrowserError');
  if (cause instanceof TimeoutFailure)
    return ApplicationFailure.nonRetryable(
      'No browser worker answered in time; try again shortly.',
      'BrowserUnavailable',
    );
  return ApplicationFailure.nonRetryable((cause as Error)?.message ?? 'Browser command failed.', 'BrowserError');
}

/**
 * A browser session `browser-<id>`: owns its state (status, URL, owning worker, last refs,
 * expiry). Commands normally go from the API straight to the owning worker (its command endpoint,
 * serialised there per session), which tells this workflow about them by the `browserTouched`
 * signal once the session is quiet. A command the owner could not take (gone, or it lost the page)
 * comes here as an update, serialised, run by an activity on the owning worker's own task queue.
 * When that worker is gone the session goes `recovering` and is re-opened on another worker from
 * its last checkpoint, and the command runs there. An idle timer expires it, after asking the owner
 * whether a direct command ran meanwhile.
 *
 * States: opening → open ⇄ recovering; open|recovering → closed | expired; opening → failed.
 */
export async function browserSessionWorkflow(input: BrowserSessionInput): Promise<BrowserSessionInput['state']> {
  const s = input.state;
  let busy = false;
  let touches = 0;
  // Set once the opening outcome is stored, so the API's re-read of the row sees it.
  let settled = s.status !== 'opening';

  const acquirer = proxyActivities<BrowserWorkerActivities>({
    taskQueue: input.browserQueue,
    scheduleToStartTimeout: '30 seconds',
    startToCloseTimeout: '90 seconds',
    retry: { maximumAttempts: 3, initialInterval: '1 second' },
  });
  const owner = (timeoutMs: number, scheduleToStart = '8 seconds') =>
    proxyActivities<BrowserWorkerActivities>({
      taskQueue: s.queue ?? input.browserQueue,
      scheduleToStartTimeout: scheduleToStart,
      startToCloseTimeout: `${timeoutMs + 30_000} ms`,
      retry: { maximumAttempts: 1 },
    });

  const setStatus = async (
    status: BrowserSessionStatus,
    extra: { error?: string | null; recovered?: boolean } = {},
  ) => {
    s.status = status;
    await store.browserSetStatus({ tenantId: s.tenantId, id: s.sessionId, status, workerId: s.workerId, ...extra });
  };
  const adopt = (got: AcquireResult) => {
    s.workerId = got.workerId;
    s.queue = got.queue;
    s.url = got.url;
    s.title = got.title;
    s.refs = got.refs.slice(0, MAX_REFS);
  };
  const acquire = (restore: boolean) =>
    acquirer.browserAcquire({
      sessionId: s.sessionId,
      tenantId: s.tenantId,
      options: input.options,
      restore,
      stateId: restore ? undefined : input.initialStateId,
    });

  const recover = async () => {
    await setStatus('recovering');
    try {
      adopt(await acquire(true));
    } catch (err) {
      throw asFailure(err);
    }
    s.recoveries++;
    await setStatus('open', { recovered: true });
  };

  const end = async (status: 'closed' | 'expired') => {
    if (s.queue && s.status === 'open') {
      await owner(10_000, '5 seconds')
        .browserRelease({ sessionId: s.sessionId })
        .catch(() => false);
    }
    await setStatus(status);
  };

  const run = async (cmd: BrowserCommand): Promise<BrowserCommandResult> => {
    const timeoutMs = 'timeoutMs' in cmd ? cmd.timeoutMs : 30_000;
    const call = () =>
      owner(timeoutMs).browserCommand({
        sessionId: s.sessionId,
        tenantId: s.tenantId,
        cmd,
        expiresAt: Date.now() + s.idleTimeoutS * 1000,
      });
    let result: BrowserCommandResult;
    try {
      if (s.status === 'recovering') await recover();
      result = await call();
    } catch (err) {
      if (!workerLost(err)) throw asFailure(err);
      await recover();
      try {
        result = await call();
      } catch (again) {
        throw asFailure(again);
      }
    }
    s.url = result.url;
    s.title = result.title;
    if (result.refs) s.refs = result.refs.slice(0, MAX_REFS);
    s.expiresAt = Date.now() + s.idleTimeoutS * 1000;
    return result;
  };

  setHandler(browserStateQuery, () => s);
  // Direct commands (not run by this workflow) move the idle deadline and the state operators see.
  setHandler(browserTouchedSignal, (t) => {
    if (isEndedStatus(s.status)) return;
    s.url = t.url;
    s.title = t.title;
    s.refs = t.refs.slice(0, MAX_REFS);
    s.expiresAt = Math.max(s.expiresAt ?? 0, Date.now() + s.idleTimeoutS * 1000 - Math.max(0, t.idleMs));
    touches++;
  });
  setHandler(browserAwaitOpenUpdate, async () => {
    await condition(() => settled);
    return s;
  });
  setHandler(
    browserCommandUpdate,
    async (cmd) => {
      while (busy) await condition(() => !busy);
      busy = true;
      touches++;
      try {
        if (cmd.op === 'close') {
          if (!isEndedStatus(s.status)) await end('closed');
          return { url: s.url ?? '', title: s.title ?? '', status: s.status };
        }
        if (isEndedStatus(s.status))
          throw ApplicationFailure.nonRetryable(`The session is ${s.status}.`, 'SessionEnded');
        return await run(cmd);
      } finally {
        busy = false;
        if (!isEndedStatus(s.status)) s.expiresAt = Date.now() + s.idleTimeoutS * 1000;
      }
    },
    {
      validator: (cmd) => {
        if (isEndedStatus(s.status) && cmd.op !== 'close') throw new Error(`The session is ${s.status}.`);
      },
    },
  );

  if (s.status === 'opening') {
    try {
      adopt(await acquire(false));
      s.expiresAt = Date.now() + s.idleTimeoutS * 1000;
      await setStatus('open');
      settled = true;
    } catch (err) {
      const f = asFailure(err);
      s.error = `${f.type}: ${f.message}`;
      await setStatus('failed', { error: s.error });
      settled = true;
      await condition(allHandlersFinished);
      return s;
    }
  }

  // Heartbeat: between commands the owner is pinged on its own queue; a worker that no longer
  // polls (schedule-to-start timeout) or lost the page moves the session to recovering at once.
  const beatMs = (input.heartbeatS ?? 0) * 1000;
  const checkOwner = async () => {
    busy = true;
    try {
      if (s.status === 'open') {
        const alive = await owner(5_000, `${Math.max(2, Math.min(10, input.heartbeatS ?? 5))} seconds`)
          .browserPing({ sessionId: s.sessionId, tenantId: s.tenantId })
          .then(() => true)
          .catch((err: unknown) => !workerLost(err));
        if (alive) return;
      }
      // Another attempt at every beat while no worker takes it; a command also retries it.
      await recover().catch(() => undefined);
    } finally {
      busy = false;
    }
  };

  for (;;) {
    const seen = touches;
    // The idle deadline moves with every command; a command in progress is never expired under.
    s.expiresAt ??= Date.now() + s.idleTimeoutS * 1000;
    const idleLeft = Math.max(1, s.expiresAt - Date.now());
    const wait = beatMs > 0 ? Math.min(beatMs, idleLeft) : idleLeft;
    const woke = await condition(() => isEndedStatus(s.status) || touches !== seen || busy, wait);
    if (isEndedStatus(s.status)) break;
    if (busy) {
      await condition(() => !busy);
      continue;
    }
    if (!woke) {
      if (Date.now() >= s.expiresAt) {
        // A direct command may have run since the last signal: the owner knows how long it has been idle.
        if (patched('browser-direct-expiry') && s.status === 'open' && s.queue) {
          busy = true;
          const seen = await owner(5_000, '3 seconds')
            .browserPing({ sessionId: s.sessionId, tenantId: s.tenantId })
            .catch(() => undefined);
          busy = false;
          const idleMs = seen && typeof seen === 'object' ? (seen.busy ? 0 : seen.idleMs) : Infinity;
          if (idleMs < s.idleTimeoutS * 1000) {
            s.expiresAt = Date.now() + s.idleTimeoutS * 1000 - idleMs;
            continue;
          }
        }
        await end('expired');
        break;
      }
      await checkOwner();
      continue;
    }
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      if (!busy && !isEndedStatus(s.status))
        await continueAsNew<typeof browserSessionWorkflow>({ ...input, state: s, initialStateId: undefined });
    }
  }
  await condition(allHandlersFinished);
  return s;
}
