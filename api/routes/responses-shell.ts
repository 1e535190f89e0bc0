import { randomToken } from '../../activities/store/ids';
import type { ResponseInputItem } from '../../schema/responses';
import type { PersonaMessage } from '../../schema/chat';
import { parseStorableJson } from '../../schema/storable';
import {
  type ClientBuiltin,
  type ComputerAction,
  type ComputerUsePreviewTool,
  isClientBuiltin,
  type ShellTool,
} from '../../schema/responses-shell';

/**
 * OpenAI's client-run built-in tools (shell, apply_patch, local_shell) over a chat lane: each is offered to the lane as
 * a function of its type's name; a call of it comes back as the tool's own item (shell_call, apply_patch_call,
 * local_shell_call) with the action read from the arguments; the client's output item goes back to the lane as the
 * tool's answer, as text.
 */

type ShellCall = {
  type: 'shell_call';
  id: string;
  call_id: string;
  action: { commands: string[]; timeout_ms: number | null; max_output_length: number | null };
  status: 'in_progress' | 'completed' | 'incomplete';
  environment: { type: 'local' } | null;
};
type ShellCallOutput = {
  type: 'shell_call_output';
  id: string;
  call_id: string;
  output: Array<{ stdout: string; stderr: string; outcome: { type: 'exit'; exit_code: number } | { type: 'timeout' } }>;
  status: 'in_progress' | 'completed' | 'incomplete';
  max_output_length: number | null;
};
type PatchOperation =
  { type: 'create_file' | 'update_file'; path: string; diff: string } | { type: 'delete_file'; path: string };
type ApplyPatchCall = {
  type: 'apply_patch_call';
  id: string;
  call_id: string;
  status: 'in_progress' | 'completed';
  operation: PatchOperation;
};
type ApplyPatchCallOutput = {
  type: 'apply_patch_call_output';
  id: string;
  call_id: string;
  status: 'completed' | 'failed';
  output: string | null;
};
type LocalShellCall = {
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
type LocalShellCallOutput = {
  type: 'local_shell_call_output';
  id: string;
  call_id: string;
  output: string;
  status: 'in_progress' | 'completed' | 'incomplete' | null;
};
/** A computer call: one action (computer_use_preview) or a list of them (computer), no safety checks pending here. */
type ComputerCall = {
  type: 'computer_call';
  id: string;
  call_id: string;
  action?: ComputerAction;
  actions?: ComputerAction[];
  pending_safety_checks: Array<{ id: string; code?: string | null; message?: string | null }>;
  status: 'in_progress' | 'completed' | 'incomplete';
};
/**
 * The screenshot the client took after a computer call: its URL, or an uploaded file's id (read into a data URL in
 * place of the id when the lane is shown it, see `readInputFiles`).
 */
type ComputerCallOutput = {
  type: 'computer_call_output';
  id: string;
  call_id: string;
  output: { type: 'computer_screenshot'; image_url?: string; file_id?: string };
  acknowledged_safety_checks: Array<{ id: string; code?: string | null; message?: string | null }>;
  status: 'completed' | 'incomplete' | 'failed';
};

/** How many of a conversation's latest screenshots the lane is shown (each earlier one is a line of text). */
export const SHOWN_SCREENSHOTS = 3;
export type BuiltinCall = ShellCall | ApplyPatchCall | LocalShellCall | ComputerCall;
type BuiltinOutput = ShellCallOutput | ApplyPatchCallOutput | LocalShellCallOutput | ComputerCallOutput;
export type BuiltinItem = BuiltinCall | BuiltinOutput;
/** A built-in client tool as a request gives it. */
type BuiltinTool = ShellTool | { type: 'apply_patch' | 'local_shell' | 'computer' } | ComputerUsePreviewTool;

const ITEM_PREFIX = {
  shell_call: 'sh',
  shell_call_output: 'sho',
  apply_patch_call: 'apc',
  apply_patch_call_output: 'apco',
  local_shell_call: 'lsh',
  local_shell_call_output: 'lsho',
  computer_call: 'cu',
  computer_call_output: 'cuo',
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
export function builtinAsFunction(t: BuiltinTool) {
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
  if (t.type === 'computer_use_preview')
    return fn(
      `Acts on the user's ${t.environment} display (${t.display_width}x${t.display_height} pixels, x from the left and y from the top), one action a call; a screenshot of the display after it comes back. ${COMPUTER_ACTIONS}`,
      ACTION_FIELDS,
      ['type'],
    );
  if (t.type === 'computer')
    return fn(
      `Acts on the user's display (x from the left and y from the top, in the screenshot's pixels): the actions in order; a screenshot of the display after them comes back. ${COMPUTER_ACTIONS}`,
      {
        actions: {
          type: 'array',
          items: { type: 'object', properties: ACTION_FIELDS, required: ['type'] },
          description: 'The actions, in order.',
        },
      },
      ['actions'],
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

const COMPUTER_ACTIONS =
  'Actions: click (x, y, button), double_click (x, y), drag (path of {x, y} points), keypress (keys, e.g. ["CTRL", "A"]), move (x, y), screenshot, scroll (x, y, scroll_x, scroll_y in pixels), type (text), wait.';
/** One action's fields as the lane writes them. */
const ACTION_FIELDS = {
  type: {
    type: 'string',
    enum: ['click', 'double_click', 'drag', 'keypress', 'move', 'screenshot', 'scroll', 'type', 'wait'],
  },
  x: { type: 'integer' },
  y: { type: 'integer' },
  button: { type: 'string', enum: ['left', 'right', 'wheel', 'back', 'forward'] },
  keys: { type: 'array', items: { type: 'string' } },
  path: {
    type: 'array',
    items: { type: 'object', properties: { x: { type: 'integer' }, y: { type: 'integer' } }, required: ['x', 'y'] },
  },
  scroll_x: { type: 'integer' },
  scroll_y: { type: 'integer' },
  text: { type: 'string' },
};

/** A coordinate the model wrote (a number, or a number as text), rounded; undefined when it wrote none. */
function coord(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? Math.max(-1_000_000, Math.min(1_000_000, Math.round(n))) : undefined;
}
/** A point: `x` and `y`, or a `coordinate` pair as some models write it; undefined when either is missing. */
function pointOf(v: unknown): { x: number; y: number } | undefined {
  if (v === null || typeof v !== 'object') return undefined;
  const o = v as Record<string, unknown>;
  const pair = Array.isArray(o.coordinate) ? o.coordinate : [];
  const x = coord(o.x ?? pair[0]);
  const y = coord(o.y ?? pair[1]);
  return x === undefined || y === undefined ? undefined : { x, y };
}
const keysOf = (v: unknown): string[] | undefined =>
  Array.isArray(v)
    ? v.filter((k): k is string => typeof k === 'string' && k !== '').slice(0, 100)
    : typeof v === 'string' && v !== ''
      ? [v]
      : undefined;

/**
 * One action the model wrote, in the contract's shape (the left button by default). An action that does not read as
 * one (no known type, a position or a path point missing, nothing to type or press) is a screenshot: it changes
 * nothing on the display, and the model sees the display as it is.
 */
function actionOf(v: unknown): ComputerAction {
  const a = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  const keys = keysOf(a.keys);
  const withKeys = keys?.length ? { keys } : {};
  const at = pointOf(a);
  const screenshot = { type: 'screenshot' as const };
  switch (a.type) {
    case 'click': {
      const buttons = ['left', 'right', 'wheel', 'back', 'forward'] as const;
      const button = buttons.find((b) => b === a.button) ?? 'left';
      return at ? { type: 'click', button, ...at, ...withKeys } : screenshot;
    }
    case 'double_click':
      return at ? { type: 'double_click', ...at, keys: keys?.length ? keys : null } : screenshot;
    case 'drag': {
      const path = Array.isArray(a.path) ? a.path.slice(0, 10_000).map(pointOf) : [];
      return path.length >= 2 && path.every((p) => p !== undefined)
        ? { type: 'drag', path: path as Array<{ x: number; y: number }>, ...withKeys }
        : screenshot;
    }
    case 'keypress':
      return keys?.length ? { type: 'keypress', keys } : screenshot;
    case 'move':
      return at ? { type: 'move', ...at, ...withKeys } : screenshot;
    case 'scroll': {
      const sx = coord(a.scroll_x) ?? 0;
      const sy = coord(a.scroll_y) ?? 0;
      return at && (sx !== 0 || sy !== 0)
        ? { type: 'scroll', ...at, scroll_x: sx, scroll_y: sy, ...withKeys }
        : screenshot;
    }
    case 'type':
      return typeof a.text === 'string' && a.text !== '' ? { type: 'type', text: a.text } : screenshot;
    case 'wait':
      return { type: 'wait' };
    default:
      return screenshot;
  }
}

/**
 * The arguments the lane wrote, as an object (empty when they are not a JSON object), with what PostgreSQL cannot
 * store (a NUL, a lone surrogate written as an escape) made storable.
 */
function argsOf(args: string): Record<string, unknown> {
  try {
    const v = parseStorableJson(args);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A list of strings from what the model wrote: a string is a list of one; what is not a string is left out. */
const strings = (v: unknown): string[] =>
  typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
const positive = (v: unknown): number | null => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : null);
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * The operation an apply_patch call's arguments describe (flat, or under `operation` as OpenAI's item has it). An
 * operation the model left unclear is an update with no diff, which changes nothing: a file is deleted only when the
 * model said so, and created only with what it gave (`diff`, or the file's `content`, which is written as the
 * create diff's added lines). With no path the client has nothing to act on (its editor answers failed).
 */
function operationOf(a: Record<string, unknown>): PatchOperation {
  const o = a.operation !== null && typeof a.operation === 'object' ? (a.operation as Record<string, unknown>) : a;
  const path = text(o.path) ?? '';
  const noop = { type: 'update_file' as const, path, diff: '' };
  if (o.type === 'delete_file') return path ? { type: 'delete_file', path } : noop;
  const diff = text(o.diff);
  if (o.type === 'create_file') {
    const content = text(o.content);
    const created =
      diff ??
      (content !== null
        ? content
            .replace(/\n$/, '')
            .split('\n')
            .map((l) => `+${l}`)
            .join('\n')
        : null);
    return created !== null && path ? { type: 'create_file', path, diff: created } : noop;
  }
  return { ...noop, diff: diff ?? '' };
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
  if (kind === 'computer_use_preview' || kind === 'computer') {
    const one = a.action !== null && typeof a.action === 'object' ? a.action : a;
    return {
      type: 'computer_call',
      id: id ?? newId('computer_call'),
      call_id: call.id,
      // A call still streaming has no action yet (the arguments are read whole).
      ...(status === 'in_progress'
        ? {}
        : kind === 'computer_use_preview'
          ? { action: actionOf(one) }
          : {
              actions:
                Array.isArray(a.actions) && a.actions.length ? a.actions.slice(0, 100).map(actionOf) : [actionOf(one)],
            }),
      pending_safety_checks: [],
      status,
    };
  }
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
  if (item.type === 'computer_call') {
    // A list of actions is the computer tool's call; one action alone, the preview tool's. A call that never got its
    // action (a stream that failed while the call was written) reads as the computer tool's, with none.
    const preview = item.action !== undefined && item.actions === undefined;
    const args = preview ? item.action : { actions: item.actions ?? [] };
    const name = preview ? 'computer_use_preview' : 'computer';
    return { id: item.call_id, type: 'function' as const, function: { name, arguments: JSON.stringify(args) } };
  }
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
export function builtinOutputText(item: BuiltinOutput, shown = true): string {
  if (item.type === 'computer_call_output')
    return shown && item.output.image_url
      ? 'Done. The screenshot of the display after this call is in the next message.'
      : `Done. (Its screenshot is left out: the model is shown the latest ${SHOWN_SCREENSHOTS}.)`;
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

/**
 * The screenshot a computer call's output carries, as a user message the lane reads after the turn's tool answers (a
 * tool message cannot carry an image in the chat format).
 */
export function screenshotMessage(item: ComputerCallOutput & { output: { image_url: string } }): PersonaMessage {
  return {
    role: 'user',
    content: [
      { type: 'text', text: `[Screenshot after the computer call ${item.call_id}]` },
      { type: 'image_url', image_url: { url: item.output.image_url, detail: 'auto' } },
    ],
  };
}

/** An action a client sent back, with the fields the contract requires (a double click's `keys`, null when none). */
const contractAction = (a: ComputerAction): ComputerAction =>
  a.type === 'double_click' ? { ...a, keys: a.keys ?? null } : a;

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
    case 'computer_call':
      return {
        type: 'computer_call',
        id: item.id ?? newId('computer_call'),
        call_id: item.call_id,
        ...(item.action != null ? { action: contractAction(item.action) } : {}),
        ...(item.actions != null ? { actions: item.actions.map(contractAction) } : {}),
        pending_safety_checks: item.pending_safety_checks ?? [],
        status: item.status ?? 'completed',
      };
    case 'computer_call_output':
      // A screenshot given by file id is read into its image_url by readInputFiles when the lane is shown it.
      return {
        type: 'computer_call_output',
        id: item.id ?? newId('computer_call_output'),
        call_id: item.call_id,
        output: {
          type: 'computer_screenshot',
          ...(item.output.image_url != null ? { image_url: item.output.image_url } : {}),
          ...(item.output.file_id != null ? { file_id: item.output.file_id } : {}),
        },
        acknowledged_safety_checks: item.acknowledged_safety_checks ?? [],
        // The resource's statuses: a screenshot sent while still in progress is taken as completed.
        status: item.status === 'incomplete' || item.status === 'failed' ? item.status : 'completed',
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
