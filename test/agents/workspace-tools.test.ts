import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { classifyQuery } from '../../activities/agents/classify';
import { runSandboxed, sandboxStatus } from '../../activities/agents/sandbox';
import { workspaceTools } from '../../activities/agents/workspace-tools';
import { runTool } from '../../activities/tools/registry';
import type { ToolContext } from '../../activities/tools/types';

// The workspace tools against a real folder (and, where bwrap works, the real sandbox). Each escape
// is tried on its own: by name (absolute, ..), through a symlink to a file and to a folder outside,
// and a write through a planted symlink; outside files are checked untouched.

const ctx = { deps: { log: pino({ level: 'silent' }) } } as unknown as ToolContext;
const outside = mkdtempSync(path.join(tmpdir(), 'svc-ws-outside-'));
const secret = path.join(outside, 'secret.txt');
writeFileSync(secret, 'top secret');
const dir = mkdtempSync(path.join(tmpdir(), 'svc-ws-'));
mkdirSync(path.join(dir, 'sub'));
writeFileSync(path.join(dir, 'sub', 'ok.txt'), 'inside');
symlinkSync(secret, path.join(dir, 'link-file'));
symlinkSync(outside, path.join(dir, 'link-dir'));
const caps = { timeoutS: 5, memoryMb: 256, cpuS: 5 };
const tools = workspaceTools({ dir, shell: caps });
const tool = (name: string) => tools.find((t) => t.name === name)!;
const call = (name: string, args: unknown) => runTool(tool(name), args, ctx);

test('reads, writes and lists inside the folder', async () => {
  expect(await call('file_write', { path: 'a/b/new.txt', content: 'hello' })).toEqual({
    ok: true,
    result: { path: 'a/b/new.txt', bytes: 5 },
  });
  expect(await call('file_read', { path: 'a/b/new.txt' })).toMatchObject({ ok: true, result: { content: 'hello' } });
  expect(await call('file_read', { path: './sub/ok.txt' })).toMatchObject({ ok: true, result: { content: 'inside' } });
  const list = await call('file_list', {});
  expect(list.ok && (list.result.files as Array<{ path: string }>).map((f) => f.path)).toEqual(
    expect.arrayContaining(['sub', 'sub/ok.txt', 'a/b/new.txt', 'link-dir', 'link-file']),
  );
  // A symlinked folder is listed, never entered.
  expect(list.ok && (list.result.files as Array<{ path: string }>).some((f) => f.path.startsWith('link-dir/'))).toBe(
    false,
  );
});

test.each([
  ['file_read', { path: '../secret.txt' }, 'leaves the workspace'],
  ['file_read', { path: 'sub/../../secret.txt' }, 'leaves the workspace'],
  ['file_read', { path: secret }, 'is absolute'],
  ['file_read', { path: 'link-file' }, 'resolves outside the workspace'],
  ['file_read', { path: 'link-dir/secret.txt' }, 'resolves outside the workspace'],
  ['file_list', { path: 'link-dir' }, 'resolves outside the workspace'],
  ['file_write', { path: '../escape.txt', content: 'x' }, 'leaves the workspace'],
  ['file_write', { path: '/tmp/escape.txt', content: 'x' }, 'is absolute'],
  ['file_write', { path: 'link-dir/escape.txt', content: 'x' }, 'resolves outside the workspace'],
  ['file_write', { path: 'link-file', content: 'overwritten' }, 'is a symbolic link'],
  ['file_write', { path: 'link-dir/newsub/escape.txt', content: 'x' }, 'resolves outside the workspace'],
])('%s %j is refused (%s)', async (name, args, why) => {
  const r = await call(name, args);
  expect(r.ok).toBe(false);
  expect(!r.ok && r.error).toContain(why);
  expect(readFileSync(secret, 'utf8')).toBe('top secret');
  expect(existsSync(path.join(outside, 'escape.txt'))).toBe(false);
  expect(existsSync(path.join(outside, 'newsub'))).toBe(false);
});

test('classifier: deterministic, documented features', () => {
  expect(classifyQuery({ query: 'What is 2 + 2?' })).toEqual({ name: 'quick', score: 0, reasons: [] });
  expect(classifyQuery({ query: 'Compare A and B, then plan the move.' }).name).toBe('standard');
  expect(classifyQuery({ query: 'Refactor utils.py to remove the global.' }).name).toBe('code');
  expect(classifyQuery({ query: 'Fix my bike.' }).name).toBe('quick'); // a change verb without a code marker
  expect(classifyQuery({ query: 'hi', tools: ['a', 'b', 'c'] }).reasons).toEqual(['3 tools requested']);
  expect(classifyQuery({ query: 'x'.repeat(1600) }).score).toBe(2);
});

const sandbox = sandboxStatus();
// bwrap may be refused by a host (no user namespaces): there the shell is not offered and health
// says why (last test). Here it works (the brief's check), and these tests require it.
describe('sandboxed shell', () => {
  test('bwrap works on this machine', () => {
    expect(sandbox).toMatchObject({ available: true });
  });

  test('runs in the folder as /work with no network: a listening local port is unreachable', async () => {
    let connections = 0;
    const server = net.createServer((s) => {
      connections++;
      s.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as net.AddressInfo).port;
    // Control: the port is reachable from outside the sandbox.
    await new Promise<void>((r) => {
      server.once('connection', () => r());
      net.connect(port, '127.0.0.1').on('error', () => undefined);
    });
    const before = connections;
    expect(before).toBe(1);
    const r = await call('shell', {
      command: `cat sub/ok.txt; bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}' && echo CONNECTED || echo REFUSED; ls /sys/class/net 2>/dev/null | tr '\\n' ' '`,
    });
    server.close();
    expect(r.ok).toBe(true);
    const out = r.ok ? (r.result.stdout as string) : '';
    expect(out).toContain('inside');
    expect(out).toContain('REFUSED');
    expect(out).not.toContain('CONNECTED');
    expect(connections).toBe(before);
  });

  test('caps: wall time kills the command; memory and CPU limits apply', async () => {
    const slow = await runSandboxed(dir, 'sleep 30', { ...caps, timeoutS: 1 });
    expect(slow).toMatchObject({ timed_out: true, exit_code: null });
    const limits = await runSandboxed(dir, 'ulimit -v; ulimit -t', caps);
    expect(limits.stdout.trim().split('\n')).toEqual([String(256 * 1024), '5']);
    const host = await runSandboxed(dir, 'cat /etc/hostname 2>&1; echo $HOME; ls /root 2>&1 | head -1', caps);
    expect(host.stdout).toContain('/work');
    expect(host.stdout).toMatch(/No such file/);
  });
});

test('health explains the shell', () => {
  expect(sandbox.reason.length).toBeGreaterThan(10);
  if (!sandbox.available) expect(workspaceTools({ dir }).map((t) => t.name)).not.toContain('shell');
});
