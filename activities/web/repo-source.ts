import { execFile } from 'node:child_process';
import dns from 'node:dns/promises';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AppError } from '../../schema/errors';
import { checkUrl, isPrivateAddress, privateAllowed, type PrivateFetchPolicy } from '../net/ssrf';

const bad = (message: string) =>
  new AppError('invalid_request', `repo: ${message}`, { details: [{ path: 'body.repo', message }] });

export function runGit(
  args: string[],
  opts: { cwd?: string; timeoutMs?: number; maxBuffer?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      {
        cwd: opts.cwd,
        timeout: opts.timeoutMs ?? 20_000,
        maxBuffer: opts.maxBuffer ?? 32 * 1024 * 1024,
        env: { PATH: process.env.PATH, HOME: tmpdir(), GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1', LANG: 'C' },
      },
      (err, stdout, stderr) => (err ? reject(Object.assign(err, { stderr })) : resolve(stdout)),
    );
  });
}

/**
 * A local path confined to the configured roots: both sides resolved with realpath, so `..` and
 * symbolic links that lead outside are refused like any other outside path.
 * @throws AppError invalid_request naming body.repo
 */
export function confinedPath(roots: string[], raw: string): string {
  if (!roots.length) throw bad('local paths are not enabled on this server (SVC_REPO_ROOTS is not set).');
  let real: string;
  try {
    real = realpathSync(path.resolve(raw));
  } catch {
    throw bad('no such folder inside the configured roots.');
  }
  for (const root of roots) {
    let r: string;
    try {
      r = realpathSync(root);
    } catch {
      continue;
    }
    if (real === r || real.startsWith(r + path.sep)) return real;
  }
  throw bad('the path is outside the configured roots (SVC_REPO_ROOTS).');
}

export interface ClonedRepo {
  dir: string;
  cleanup(): void;
}

/**
 * Shallow-clones an http(s) git URL into a temporary folder. The host goes through the fetch
 * guard's rules first (scheme, credentials, and every address it resolves to must be public
 * unless private fetches are allowed); git is told not to follow redirects, to use no other
 * protocol and never to prompt; time and size are capped and the folder is removed on failure.
 * @throws AppError invalid_request (refused URL), upstream_error (clone failed), payload_too_large
 */
export async function cloneRepo(
  raw: string,
  ref: string | undefined,
  opts: { allowPrivate: PrivateFetchPolicy; timeoutMs?: number; maxBytes?: number },
): Promise<ClonedRepo> {
  const url = checkUrl(raw, {
    allowPrivate: opts.allowPrivate,
    refuseLocalNames: true,
    makeError: (r) =>
      bad(
        r.reason === 'scheme'
          ? 'only http(s) git URLs can be cloned.'
          : r.reason === 'credentials'
            ? 'URLs with credentials are refused.'
            : r.reason === 'invalid'
              ? 'not a valid URL.'
              : `refused to clone from ${r.url.host}: private or loopback address.`,
      ),
  });
  if (opts.allowPrivate !== true && !isIP(url.hostname.replace(/^\[|\]$/g, ''))) {
    let addresses: Array<{ address: string }>;
    try {
      addresses = await dns.lookup(url.hostname, { all: true });
    } catch {
      throw new AppError('upstream_error', `Host ${url.hostname} could not be resolved.`);
    }
    if (
      addresses.some((a) => isPrivateAddress(a.address) && !privateAllowed(opts.allowPrivate, url.hostname, a.address))
    )
      throw bad(`refused to clone from ${url.host}: it resolves to a private address.`);
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-repo-'));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  const maxBytes = opts.maxBytes ?? 200 * 1024 * 1024;
  const base = [
    '-c',
    'http.followRedirects=false',
    '-c',
    'protocol.allow=never',
    '-c',
    `protocol.${url.protocol.slice(0, -1)}.allow=always`,
    '-c',
    'core.symlinks=false',
  ];
  const clone = (shallow: boolean) =>
    runGit(
      [
        ...base,
        'clone',
        '--quiet',
        '--no-tags',
        '--single-branch',
        ...(shallow ? ['--depth', '50'] : []),
        ...(ref ? ['--branch', ref] : []),
        '--',
        url.toString(),
        dir,
      ],
      { timeoutMs: opts.timeoutMs ?? 60_000 },
    );
  try {
    try {
      await clone(true);
    } catch (err) {
      // The "dumb" HTTP protocol cannot shallow-clone: try once more in full (still under the caps).
      if (!/shallow|dumb/i.test(String((err as { stderr?: string }).stderr))) throw err;
      rmSync(dir, { recursive: true, force: true });
      await clone(false);
    }
    const size =
      Number((await runGit(['count-objects', '-v'], { cwd: dir })).match(/size-pack: (\d+)/)?.[1] ?? 0) * 1024;
    if (size > maxBytes)
      throw new AppError('payload_too_large', `The repository is larger than the ${maxBytes}-byte clone limit.`);
    return { dir: realpathSync(dir), cleanup };
  } catch (err) {
    cleanup();
    if (err instanceof AppError) throw err;
    const e = err as { killed?: boolean; stderr?: string };
    if (e.killed) throw new AppError('upstream_timeout', 'Cloning the repository took longer than the time limit.');
    throw new AppError(
      'upstream_error',
      `Cloning ${url.host}${url.pathname} failed: ${
        String(e.stderr ?? '')
          .trim()
          .split('\n')
          .pop()
          ?.slice(0, 200) || 'git error'
      }`,
    );
  }
}
