import { Context } from '@temporalio/activity';

/**
 * Heartbeats (every second) while `fn` runs. Activities see cancellation only through heartbeats: with this, a
 * cancelled workflow's activity hears of it and its `Context.current().cancellationSignal` aborts the model call,
 * fetch or shell it passed the signal to; and a dead worker is noticed after the activity's heartbeatTimeout.
 */
export async function heartbeating<T>(fn: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(), 1000);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}
