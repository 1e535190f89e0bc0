import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { AppError } from '../../schema/errors';
import { defineToolDef, type ToolDef } from '../tools/types';
import { runSandboxed } from './sandbox';

// Tools confined to one run's scratch folder. They are not in the registry: they exist only
// inside a workspace run, bound to its folder. Escapes are refused before any file is touched:
// absolute paths and `..` segments by name, symlinks by realpath (reads) and O_NOFOLLOW plus a
// realpath check of the parent (writes).

export const WORKSPACE_TOOL_NAMES = ['file_list', 'file_read', 'file_write', 'shell'] as const;
const MAX_READ = 256 * 1024;

const RelPath = z
  .string()
  .min(1)
  .max(500)
  .describe('A path relative to the workspace folder (no absolute paths, no `..`).');

function refuse(message: string): AppError {
  return new AppError('invalid_request', message);
}

function checkName(rel: string): void {
  if (path.isAbsolute(rel) || /^[a-zA-Z]:/.test(rel)) throw refuse(`path: "${rel}" is absolute; use a relative path.`);
  if (rel.split(/[\\/]+/).includes('..')) throw refuse(`path: "${rel}" leaves the workspace ("..").`);
  if (rel.includes('\0')) throw refuse('path: contains a NUL byte.');
}

async function inside(root: string, target: string): Promise<boolean> {
  const realRoot = await realpath(root);
  return target === realRoot || target.startsWith(realRoot + path.sep);
}

/** The real path of an existing entry, refused when it (through a symlink) lies outside the folder. */
export async function resolveExisting(root: string, rel: string): Promise<string> {
  checkName(rel);
  let real: string;
  try {
    real = await realpath(path.resolve(root, rel));
  } catch {
    throw refuse(`path: "${rel}" does not exist.`);
  }
  if (!(await inside(root, real))) throw refuse(`path: "${rel}" resolves outside the workspace.`);
  return real;
}

/** Where a new file goes: its parent is created inside the folder and checked by realpath; a symlink target is refused. */
export async function resolveForWrite(root: string, rel: string): Promise<string> {
  checkName(rel);
  const target = path.resolve(root, rel);
  const parent = path.dirname(target);
  // The deepest existing ancestor is checked before any folder is made: a planted symlinked folder
  // must not get new folders created under it, outside the workspace.
  let existing = parent;
  while (!(await lstat(existing).catch(() => undefined))) existing = path.dirname(existing);
  if (!(await inside(root, await realpath(existing)))) throw refuse(`path: "${rel}" resolves outside the workspace.`);
  await mkdir(parent, { recursive: true });
  const realParent = await realpath(parent);
  if (!(await inside(root, realParent))) throw refuse(`path: "${rel}" resolves outside the workspace.`);
  const st = await lstat(target).catch(() => undefined);
  if (st?.isSymbolicLink()) throw refuse(`path: "${rel}" is a symbolic link; links are not followed.`);
  return path.join(realParent, path.basename(target));
}

export function workspaceTools(o: {
  dir: string;
  shell?: { timeoutS: number; memoryMb: number; cpuS: number };
  signal?: () => AbortSignal | undefined;
}): ToolDef[] {
  const tools: ToolDef[] = [
    defineToolDef({
      name: 'file_list',
      title: 'List workspace files',
      description: 'List files in the workspace folder (recursively, at most 500 entries).',
      input: z.object({ path: RelPath.optional() }),
      output: z.object({ files: z.array(z.object({ path: z.string(), size: z.number(), dir: z.boolean() })) }),
      readOnly: true,
      destructive: false,
      external: false,
      scope: 'runtime:workspaces',
      group: 'workspace',
      run: async (args) => {
        const start = args.path ? await resolveExisting(o.dir, args.path) : await realpath(o.dir);
        const base = await realpath(o.dir);
        const files: Array<{ path: string; size: number; dir: boolean }> = [];
        const walk = async (d: string): Promise<void> => {
          for (const e of await readdir(d, { withFileTypes: true })) {
            if (files.length >= 500) return;
            const full = path.join(d, e.name);
            const st = await lstat(full);
            files.push({ path: path.relative(base, full), size: st.size, dir: e.isDirectory() });
            if (e.isDirectory()) await walk(full); // symlinked folders are listed, never entered
          }
        };
        await walk(start);
        return { files };
      },
    }),
    defineToolDef({
      name: 'file_read',
      title: 'Read a workspace file',
      description: 'Read a UTF-8 text file from the workspace folder (at most 256 KiB).',
      input: z.object({ path: RelPath }),
      output: z.object({ path: z.string(), content: z.string(), truncated: z.boolean() }),
      readOnly: true,
      destructive: false,
      external: false,
      scope: 'runtime:workspaces',
      group: 'workspace',
      run: async (args) => {
        const real = await resolveExisting(o.dir, args.path);
        const fh = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
        try {
          const buf = Buffer.alloc(MAX_READ + 1);
          const { bytesRead } = await fh.read(buf, 0, MAX_READ + 1, 0);
          return {
            path: args.path,
            content: buf.subarray(0, Math.min(bytesRead, MAX_READ)).toString('utf8'),
            truncated: bytesRead > MAX_READ,
          };
        } finally {
          await fh.close();
        }
      },
    }),
    defineToolDef({
      name: 'file_write',
      title: 'Write a workspace file',
      description: 'Create or replace a text file in the workspace folder (parent folders are created).',
      input: z.object({ path: RelPath, content: z.string().max(1024 * 1024) }),
      output: z.object({ path: z.string(), bytes: z.number() }),
      readOnly: false,
      destructive: true,
      external: false,
      scope: 'runtime:workspaces',
      group: 'workspace',
      run: async (args) => {
        const target = await resolveForWrite(o.dir, args.path);
        const fh = await open(
          target,
          constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
        );
        try {
          await fh.writeFile(args.content, 'utf8');
        } finally {
          await fh.close();
        }
        return { path: args.path, bytes: Buffer.byteLength(args.content) };
      },
    }),
  ];
  const caps = o.shell;
  if (caps) {
    tools.push(
      defineToolDef({
        name: 'shell',
        title: 'Run a shell command',
        description: `Run a /bin/sh command in a sandbox whose working folder is the workspace (as /work). No network; at most ${caps.timeoutS} s, ${caps.cpuS} CPU-seconds and ${caps.memoryMb} MB.`,
        input: z.object({ command: z.string().min(1).max(8000) }),
        output: z.object({
          exit_code: z.number().nullable(),
          stdout: z.string(),
          stderr: z.string(),
          timed_out: z.boolean(),
          truncated: z.boolean(),
        }),
        readOnly: false,
        destructive: true,
        external: false,
        scope: 'runtime:workspaces',
        group: 'workspace',
        run: (args) => runSandboxed(o.dir, args.command, caps, o.signal?.()),
      }),
    );
  }
  return tools;
}
