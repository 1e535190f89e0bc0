/**
 * The process lifecycle as the app sees it: long-lived responses (SSE streams, WebSockets) register to be
 * told when the process starts draining, so they can end with a reconnect hint instead of a reset.
 */
export interface Lifecycle {
  readonly draining: boolean;
  /** Runs `fn` when draining starts (at once if it already has); returns an unsubscribe function. */
  onDrain(fn: () => void): () => void;
  /** Starts draining: every registered callback runs once. */
  drain(): void;
}

export function createLifecycle(): Lifecycle {
  const callbacks = new Set<() => void>();
  let draining = false;
  return {
    get draining() {
      return draining;
    },
    onDrain(fn) {
      if (draining) {
        fn();
        return () => {};
      }
      callbacks.add(fn);
      return () => callbacks.delete(fn);
    },
    drain() {
      if (draining) return;
      draining = true;
      for (const fn of [...callbacks]) fn();
      callbacks.clear();
    },
  };
}
