import { randomToken } from '../../activities/store/ids';
import type { ResponseInputItem } from '../../schema/responses';
import { type ClientBuiltin, isClientBuiltin, type ShellTool } from '../../schema/responses-shell';

/**
 * OpenAI's client-run built-in tools (shell, apply_patch, local_shell) over a chat lane: each is offered to the lane as
 * a function of its type's name; a call of it comes back as the tool's own item (shell_call, apply_patch_call,
 * local_shell_call) with the action read from the arguments; the client's output item goes back to the lane as the
 * tool's answer, as text.
 */

export type ShellCall = {
  type: 'shell_call';
  id: string;
  call_id: string;
  action: { commands: string[]; timeout_ms: number | null; max_output_length: number | null };
  status: 'in_progress' | 'completed' | 'incomplete';
  environment: { type: 'local' } | null;
};
export type ShellCallOutput = {
  type: 'shell_call_output';
  id: string;
  call_id: string;
  output: Array<{ stdout: string; stderr: string; outcome: { type: 'exit'; exit_code: number } | { type: 'timeout' } }>;
  status: 'in_progress' | 'completed' | 'incomplete';
  max_output_length: number | null;
};
export type PatchOperation =
  { type: 'create_file' | 'update_file'; path: string; diff: string } | { type: 'delete_file'; path: string };
export type ApplyPatchCall = {
  type: 'apply_patch_call';
  id: string;
  call_id: string;
  status: 'in_progress' | 'completed';
  operation: PatchOperation;
};
export type ApplyPatchCallOutput = {
  type: 'apply_patch_call_output';
  id: string;
  call_id: string;
  status: 'completed' | 'failed';
  output: string | null;
};
export type LocalShellCall = {
  type: 'local_shell_call';
  id: string;
  call_id: string;
  action: {
    type: 'exec';
    command: string[];
    env: Record<string, string>;
    timeout_ms: number | null;
    working_directory: string | null;
    user: string | null;
  };
  status: 'in_progress' | 'completed' | 'incomplete';
};
export type LocalShellCallOutput = {
  type: 'local_shell_call_output';
  id: string;
  call_id: string;
  output: string;
  status: 'in_progress' | 'completed' | 'incomplete' | null;
};
export type BuiltinCall = ShellCall | ApplyPatchCall | LocalShellCall;
export type BuiltinItem = BuiltinCall | ShellCallOutput | ApplyPatchCallOutput | LocalShellCallOutput;
export const BUILTIN_ITEM_TYPES: ReadonlySet<string> = new Set([
  'shell_call',
  'shell_call_output',
  'apply_patch_call',
  'apply_patch_call_output',
  'local_shell_call',
  'local_shell_call_output',
]);

const ITEM_PREFIX = {
  shell_call: 'sh',
  shell_call_output: 'sho',
  apply_patch_call: 'apc',
  apply_patch_call_output: 'apco',
  local_shell_call: 'lsh',
  local_shell_call_output: 'lsho',
} as const;
const newId = (type: BuiltinItem['type']) => `${ITEM_PREFIX[type]}_${randomToken(24)}`;

/**
 * The entry a built-in tool has in a response's call kinds (the set that also holds its custom tools' names): `@` and
 * its type, which no function name can be.
 */
export const builtinKind = (type: ClientBuiltin) => `@${type}`;

/** The built-in tool a call of the lane is, when that tool was offered (its function has the type's name). */
export const builtinOf = (name: string, kinds: ReadonlySet<string>): ClientBuiltin | undefined =>
  isClientBuiltin(name) && kinds.has(builtinKind(name)) ? name : undefined;

const PATCH_DIFF =
  'For create_file, diff is the whole new file, each line prefixed with "+". For update_file, diff is a V4A diff: one or more hunks, each starting with "@@" (optionally followed by the line of a nearby function or class), then context lines prefixed with " ", removed lines with "-" and added lines with "+"; give about three lines of context around each change. delete_file takes no diff.';

/** A built-in tool as the lane's function (its name is the tool's type). */
export function builtinAsFunction(t: { type: ClientBuiltin } & Partial<Pick<ShellTool, 'environment'>>) {
  const fn = (description: string, properties: Record<string, unknown>, required: string[]) => ({
    type: 'function' as const,
    function: {
      name: t.type,
      description,
      parameters: { type: 'object', properties, required, additionalProperties: false },
    },
  });
  if (t.type === 'shell') {
    const skills = t.environment?.skills ?? [];
    const listed = skills.length
      ? `\n\nSkills on the user's computer (read a skill's SKILL.md in its folder before using it):\n${skills
          .map((s) => `- ${s.name} (${s.path}): ${s.description}`)
          .join('\n')}`
      : '';
    return fn(
      `Runs shell commands on the user's computer, in order; each command's stdout, stderr and exit code come back.${listed}`,
      {
        commands: { type: 'array', items: { type: 'string' }, description: 'The commands to run, in order.' },
        timeout_ms: { type: 'integer', description: 'How long the commands may run, in milliseconds.' },
        max_output_length: { type: 'integer', description: 'At most this many characters of output per command.' },
      },
      ['commands'],
    );
  }
  if (t.type === 'apply_patch')
    return fn(
      `Creates, updates or deletes one file on the user's computer. ${PATCH_DIFF}`,
      {
        type: { type: 'string', enum: ['create_file', 'update_file', 'delete_file'] },
        path: { type: 'string', description: 'The path of the file, relative to the working directory.' },
        diff: { type: 'string', description: 'The diff (create_file and update_file).' },
      },
      ['type', 'path'],
    );
  return fn(
    "Runs one command on the user's computer (argv form, no shell unless you call one); its output comes back.",
    {
      command: { type: 'array', items: { type: 'string' }, description: 'The program and its arguments.' },
      env: { type: 'object', additionalProperties: { type: 'string' }, description: 'Environment variables to set.' },
      working_directory: { type: 'string' },
      timeout_ms: { type: 'integer' },
      user: { type: 'string' },
    },
    ['command'],
  );
}

/** The arguments the lane wrote, as an object (empty when they are not a JSON object). */
function argsOf(args: string): Record<string, unknown> {
  try {
    const v = JSON.parse(args) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A list of strings from what the model wrote: a string is a list of one; other values are written as JSON. */
const strings = (v: unknown): string[] =>
  typeof v === 'string' ? [v] : Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))) : [];
const positive = (v: unknown): number | null => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : null);
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * The operation an apply_patch call's arguments describe (flat, or under `operation` as OpenAI's item has it). An
 * operation the model left unclear is an update with no diff: it changes nothing, and a file is deleted only when the
 * model said so.
 */
function operationOf(a: Record<string, unknown>): PatchOperation {
  const o = a.operation !== null && typeof a.operation === 'object' ? (a.operation as Record<string, unknown>) : a;
  const path = text(o.path) ?? '';
  if (o.type === 'delete_file') return { type: 'delete_file', path };
  return { type: o.type === 'create_file' ? 'create_file' : 'update_file', path, diff: text(o.diff) ?? '' };
}

/**
 * A call of the lane as the built-in tool's item: the action read from its arguments, leniently (a model may write
 * `command` for `commands`, a string for a list). Unclear values are left out, never guessed into commands.
 */
export function builtinCallItem(
  kind: ClientBuiltin,
  call: { id: string; function: { arguments: string } },
  status: 'completed' | 'incomplete' | 'in_progress',
  environment: { type: 'local' } | null,
  id?: string,
): BuiltinCall {
  const a = argsOf(call.function.arguments);
  if (kind === 'shell')
    return {
      type: 'shell_call',
      id: id ?? newId('shell_call'),
      call_id: call.id,
      action: {
        commands: strings(a.commands ?? a.command),
        timeout_ms: positive(a.timeout_ms),
        max_output_length: positive(a.max_output_length),
      },
      status,
      environment,
    };
  if (kind === 'apply_patch')
    return {
      type: 'apply_patch_call',
      id: id ?? newId('apply_patch_call'),
      call_id: call.id,
      // The contract has no incomplete apply_patch call: one cut short is still in progress (never applied).
      status: status === 'completed' ? 'completed' : 'in_progress',
      operation: operationOf(a),
    };
  const env =
    a.env !== null && typeof a.env === 'object' && !Array.isArray(a.env)
      ? Object.fromEntries(
          Object.entries(a.env as Record<string, unknown>).flatMap(([k, v]) => (typeof v === 'string' ? [[k, v]] : [])),
        )
      : {};
  return {
    type: 'local_shell_call',
    id: id ?? newId('local_shell_call'),
    call_id: call.id,
    action: {
      type: 'exec',
      command: strings(a.command ?? a.commands),
      env,
      timeout_ms: positive(a.timeout_ms),
      working_directory: text(a.working_directory),
      user: text(a.user),
    },
    status,
  };
}

/** A built-in tool's call item as the lane's tool call (its function, with the action as arguments). */
export function builtinLaneCall(item: BuiltinCall) {
  const args =
    item.type === 'shell_call'
      ? {
          commands: item.action.commands,
          ...(item.action.timeout_ms != null ? { timeout_ms: item.action.timeout_ms } : {}),
          ...(item.action.max_output_length != null ? { max_output_length: item.action.max_output_length } : {}),
        }
      : item.type === 'apply_patch_call'
        ? item.operation
        : {
            command: item.action.command,
            ...(Object.keys(item.action.env).length ? { env: item.action.env } : {}),
            ...(item.action.working_directory != null ? { working_directory: item.action.working_directory } : {}),
            ...(item.action.timeout_ms != null ? { timeout_ms: item.action.timeout_ms } : {}),
            ...(item.action.user != null ? { user: item.action.user } : {}),
          };
  const name = item.type === 'shell_call' ? 'shell' : item.type === 'apply_patch_call' ? 'apply_patch' : 'local_shell';
  return { id: item.call_id, type: 'function' as const, function: { name, arguments: JSON.stringify(args) } };
}

/** What the lane reads of a built-in tool's output: each command's exit code (or time-out), stdout and stderr. */
export function builtinOutputText(item: ShellCallOutput | ApplyPatchCallOutput | LocalShellCallOutput): string {
  if (item.type === 'local_shell_call_output') return item.output;
  if (item.type === 'apply_patch_call_output') return item.output ? `${item.status}: ${item.output}` : item.status;
  if (!item.output.length) return '(no output)';
  return item.output
    .map((c, i) => {
      const head = `${item.output.length > 1 ? `[command ${i + 1}] ` : ''}${
        c.outcome.type === 'timeout' ? 'timed out' : `exit code ${c.outcome.exit_code}`
      }`;
      return [head, c.stdout && `stdout:\n${c.stdout}`, c.stderr && `stderr:\n${c.stderr}`].filter(Boolean).join('\n');
    })
    .join('\n\n');
}

/** A built-in tool's item from a request's input, with an id and the fields its resource has. */
export function builtinInputItem(item: Extract<ResponseInputItem, { type: BuiltinItem['type'] }>): BuiltinItem {
  switch (item.type) {
    case 'shell_call':
      return {
        type: 'shell_call',
        id: item.id ?? newId('shell_call'),
        call_id: item.call_id,
        action: {
          commands: item.action.commands,
          timeout_ms: item.action.timeout_ms ?? null,
          max_output_length: item.action.max_output_length ?? null,
        },
        status: item.status ?? 'completed',
        environment: item.environment?.type === 'local' ? { type: 'local' } : null,
      };
    case 'shell_call_output':
      return {
        type: 'shell_call_output',
        id: item.id ?? newId('shell_call_output'),
        call_id: item.call_id,
        output: item.output,
        status: item.status ?? 'completed',
        max_output_length: item.max_output_length ?? null,
      };
    case 'apply_patch_call':
      return {
        type: 'apply_patch_call',
        id: item.id ?? newId('apply_patch_call'),
        call_id: item.call_id,
        status: item.status ?? 'completed',
        operation: item.operation,
      };
    case 'apply_patch_call_output':
      return {
        type: 'apply_patch_call_output',
        id: item.id ?? newId('apply_patch_call_output'),
        call_id: item.call_id,
        status: item.status,
        output: item.output ?? null,
      };
    case 'local_shell_call':
      return {
        type: 'local_shell_call',
        id: item.id ?? newId('local_shell_call'),
        call_id: item.call_id,
        action: {
          type: 'exec',
          command: item.action.command,
          env: item.action.env ?? {},
          timeout_ms: item.action.timeout_ms ?? null,
          working_directory: item.action.working_directory ?? null,
          user: item.action.user ?? null,
        },
        status: item.status ?? 'completed',
      };
    case 'local_shell_call_output': {
      // OpenAI's own form names the call by `id`: that id is the call's.
      const callId = item.call_id ?? item.id!;
      return {
        type: 'local_shell_call_output',
        id: item.id ?? newId('local_shell_call_output'),
        call_id: callId,
        output: item.output,
        status: item.status ?? null,
      };
    }
  }
}
