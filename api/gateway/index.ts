import { createGatewayListener, type GatewayListener } from '../../activities/store/gateway-listener';
import { claimJobsOfRevokedKey, revokedKeysWithJobs } from '../../activities/store/job-keys';
import type { AppDeps } from '../deps';
import { FeedbackCache } from './feedback-cache';
import { KeyCache } from './key-cache';
import { Limiter } from './limiter';
import { IdentityCache } from './identity-cache';
import { UsageRecorder } from './usage-recorder';

/** The gateway's per-process state: caches kept fresh by NOTIFY, limits, usage batching. */
export interface Gateway {
  listener: GatewayListener;
  keys: KeyCache;
  feedback: FeedbackCache;
  /** The tenant's saved profile (PUT /v1/sovereign/identity), read by every chat. */
  identity: IdentityCache;
  limiter: Limiter;
  usage: UsageRecorder;
  /** Writes pending counters and usage now (also runs every `syncMs`). */
  flush(): Promise<void>;
  /** Local effects of a key change made by this replica (before the NOTIFY comes back). */
  keyChanged(keyId: string): void;
  close(): Promise<void>;
}

/**
 * Builds the gateway of one process. On a key notice it drops the key from the cache and, when
 * the key was revoked, cancels the durable jobs that key started (one replica claims each).
 */
export function createGateway(
  deps: Pick<AppDeps, 'config' | 'db' | 'log' | 'temporal'>,
  opts: {
    now?: () => number;
    /** Servers: keep LISTEN up even without traffic (revocations must reach running jobs). */ keepListening?: boolean;
  } = {},
): Gateway {
  const { config, db, log } = deps;
  // Filled right after the listener exists (the caches need it; its callbacks need them).
  const c: { keys?: KeyCache; feedback?: FeedbackCache; identity?: IdentityCache; limiter?: Limiter } = {};
  const cancelJobsOf = async (keyId: string) => {
    const ids = await claimJobsOfRevokedKey(db, keyId);
    for (const id of ids) {
      await deps.temporal.client.workflow
        .getHandle(id)
        .cancel()
        .then(() => log.info({ workflow_id: id, key_id: keyId }, 'job cancelled: its key was revoked'))
        .catch((err: Error) =>
          log.warn({ workflow_id: id, err: err.message }, 'could not cancel the job of a revoked key'),
        );
    }
  };
  const listener = createGatewayListener({
    url: config.databaseUrl,
    log,
    idleCloseMs: config.gateway.listenerIdleMs,
    onNotice: (n) => {
      if (n.kind === 'key') {
        c.keys?.invalidateKey(n.id);
        cancelJobsOf(n.id).catch((err: Error) => log.warn({ err: err.message }, 'revoked-key job sweep failed'));
      } else if (n.kind === 'feedback') c.feedback?.invalidateTenant(n.id);
      else if (n.kind === 'identity') c.identity?.invalidateTenant(n.id);
      else if (n.kind === 'limits') c.limiter?.invalidateTenant(n.id);
    },
    onReset: () => {
      // Revocations made while nobody listened still have to stop their jobs.
      if (listener.connected) {
        void revokedKeysWithJobs(db)
          .then((ids) => Promise.all(ids.map(cancelJobsOf)))
          .catch((err: Error) => log.warn({ err: err.message }, 'revoked-key job sweep failed'));
      }
      c.keys?.reset();
      c.feedback?.reset();
      c.identity?.reset();
      c.limiter?.reset();
    },
  });
  const keys = (c.keys = new KeyCache(db, listener));
  const feedback = (c.feedback = new FeedbackCache(db, listener));
  const identity = (c.identity = new IdentityCache(db, listener));
  const limiter = (c.limiter = new Limiter(
    db,
    listener,
    log,
    { minuteMs: config.gateway.minuteMs, dayMs: config.gateway.dayMs },
    opts.now,
  ));
  const usage = new UsageRecorder(db, log);

  // One flush at a time. A flush asked for while one runs waits for it and then runs once more
  // (callers meanwhile share that one): the running one took its counts before the call, so what
  // was recorded since (e.g. the request just answered before GET /v1/usage) is written too.
  let flushing: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const flush = (): Promise<void> => {
    if (flushing)
      return (queued ??= flushing
        .catch(() => undefined)
        .then(() => {
          queued = undefined;
          return flush();
        }));
    return (flushing = Promise.all([limiter.sync().catch(() => undefined), usage.flush()])
      .then(() => undefined)
      .finally(() => (flushing = undefined)));
  };
  const timer = setInterval(() => {
    if (opts.keepListening) listener.touch();
    void flush();
  }, config.gateway.syncMs);
  timer.unref();

  return {
    listener,
    keys,
    feedback,
    identity,
    limiter,
    usage,
    flush,
    keyChanged: (keyId) => keys.invalidateKey(keyId),
    async close() {
      clearInterval(timer);
      await flush().catch(() => undefined);
      await listener.close();
    },
  };
}

const built = new WeakMap<AppDeps, Gateway>();

/** `deps.gateway`, else one built for this deps object (tests and benches that build apps directly). */
export function gatewayOf(deps: AppDeps): Gateway {
  if (deps.gateway) return deps.gateway;
  let g = built.get(deps);
  if (!g) built.set(deps, (g = createGateway(deps)));
  return g;
}
