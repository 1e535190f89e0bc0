import vm from 'node:vm';

export class ToolTimeoutError extends Error {
  constructor(ms: number) {
    super(`the tool ran longer than ${ms} ms and was stopped`);
    this.name = 'ToolTimeoutError';
  }
}

/**
 * Runs synchronous work with a hard time limit. V8 terminates the script when the limit passes,
 * even inside a library call or a backtracking regular expression, so no input can hang the
 * process. The work runs in a fresh empty context and returns plain data.
 */
export function runBounded<T>(fn: () => T, ms = 250): T {
  try {
    return vm.runInNewContext('run()', { run: fn }, { timeout: ms }) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw new ToolTimeoutError(ms);
    throw err;
  }
}
