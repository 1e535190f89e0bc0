import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * The workspace `shell` tool's sandbox: bubblewrap (`bwrap`) with every namespace unshared (no
 * network: only a loopback of its own), the system read-only, the run's folder as /work, a private
 * /tmp, a cleared environment; inside it `prlimit` caps address space, CPU seconds and file size,
 * and a wall-clock timer kills the whole process group. `--die-with-parent` and the PID namespace
 * make sure nothing outlives bwrap.
 */
export interface SandboxStatus {
  available: boolean;
  reason: string;
}

let probed: SandboxStatus | undefined;

/** Whether bwrap is installed and actually works here (user namespaces may be refused); probed once. */
export function sandboxStatus(): SandboxStatus {
  if (probed) return probed;
  const bwrap = ['/usr/bin/bwrap', '/bin/bwrap'].find((p) => existsSync(p));
  if (!bwrap) probed = { available: false, reason: 'bwrap is not installed (Debian package bubblewrap)' };
  else if (!existsSync('/usr/bin/prlimit'))
    probed = { available: false, reason: 'prlimit is not installed (util-linux)' };
  else {
    const r = spawnSync(bwrap, [...baseArgs('/tmp'), '--', '/bin/true'], { timeout: 10_000, encoding: 'utf8' });
    probed =
      r.status === 0
        ? { available: true, reason: 'bwrap works: commands run with no network and CPU, memory and time caps' }
        : {
            available: false,
            reason: `bwrap is installed but refused to start: ${(r.stderr || r.error?.message || '').trim().slice(0, 200)}`,
          };
  }
  return probed;
}

function baseArgs(dir: string): string[] {
  const ro = ['/usr', '/bin', '/lib', '/lib64', '/etc/alternatives', '/etc/ld.so.cache'].flatMap((p) =>
    existsSync(p) ? ['--ro-bind', p, p] : [],
  );
  return [
    ...ro,
    '--bind',
    dir,
    '/work',
    '--chdir',
    '/work',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    '--setenv',
    'PATH',
    '/usr/local/bin:/usr/bin:/bin',
    '--setenv',
    'HOME',
    '/work',
  ];
}

export interface ShellResult {
  exit_code: number | null;
  stdout: string;
  stderr: string;
  timed_out: boolean;
  truncated: boolean;
}

const MAX_OUT = 64 * 1024;

/** Runs one command in the sandbox; `signal` (activity cancellation) kills it at once. */
export function runSandboxed(
  dir: string,
  command: string,
  caps: { timeoutS: number; memoryMb: number; cpuS: number },
  signal?: AbortSignal,
): Promise<ShellResult> {
  const limits = [`--as=${caps.memoryMb * 1024 * 1024}`, `--cpu=${caps.cpuS}`, `--fsize=${64 * 1024 * 1024}`];
  const child = spawn(
    'bwrap',
    [...baseArgs(dir), '--', '/usr/bin/prlimit', ...limits, '--', '/bin/sh', '-c', command],
    { detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  let truncated = false;
  const take = (cur: string, chunk: Buffer) => {
    if (cur.length >= MAX_OUT) {
      truncated = true;
      return cur;
    }
    const next = cur + chunk.toString('utf8');
    if (next.length > MAX_OUT) truncated = true;
    return next.slice(0, MAX_OUT);
  };
  child.stdout.on('data', (c: Buffer) => (stdout = take(stdout, c)));
  child.stderr.on('data', (c: Buffer) => (stderr = take(stderr, c)));
  let timedOut = false;
  // The group: bwrap and everything it started (PID namespace init dies with bwrap anyway).
  const kill = () => {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, caps.timeoutS * 1000);
  signal?.addEventListener('abort', kill, { once: true });
  return new Promise((resolve, reject) => {
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', kill);
      resolve({ exit_code: code, stdout, stderr, timed_out: timedOut, truncated });
    });
  });
}
