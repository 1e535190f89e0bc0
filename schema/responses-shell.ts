import { z } from 'zod';
import { FileRef, ImageUrl, MAX_MESSAGE_CHARS } from './chat';
import { readableText } from './storable';

/**
 * OpenAI's client-run built-in tools of the Responses API: `shell` (commands run on the client's computer),
 * `apply_patch` (file edits the client applies) and `local_shell` (one argv the client runs). The model's calls come
 * back as shell_call, apply_patch_call and local_shell_call items; the client runs them and sends their outputs back,
 * as it does a function call's. The lane is offered each as a function of the same name (see
 * api/routes/responses-shell.ts). Field names and limits follow OpenAI's published contract.
 */

const ItemId = z.string().min(1).max(200);
const CallId = z.string().min(1).max(200);
const ItemStatus = z.enum(['in_progress', 'completed', 'incomplete']).nullish();
/** What one command may print (OpenAI's limit is 10 MiB a stream; one request carries at most its body limit). */
const Printed = z.string().max(MAX_MESSAGE_CHARS).transform(readableText);
const Positive = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
/** Which callers may call a tool: accepted (every call here is the model's own, `direct`). */
const AllowedCallers = z
  .array(z.enum(['direct', 'programmatic']))
  .min(1)
  .max(2)
  .nullish();

/** A skill the client keeps on its computer: named to the model with where it is. */
const LocalSkill = z
  .object({
    name: z.string().min(1).max(200),
    description: z.string().max(4000),
    path: z.string().min(1).max(4000),
  })
  .strict();

/**
 * The shell tool: the model writes commands, the client runs them (`environment` local, or left out). OpenAI's hosted
 * containers (`container_auto`, `container_reference`) are refused by name.
 */
export const ShellTool = z
  .object({
    type: z.literal('shell'),
    environment: z
      .object({ type: z.string().max(100), skills: z.array(LocalSkill).max(200).nullish() })
      .loose()
      .superRefine((e, ctx) => {
        if (e.type !== 'local')
          ctx.addIssue({
            code: 'custom',
            path: ['type'],
            message: `the '${e.type}' environment (one of OpenAI's hosted containers) is not available here: leave environment out or give {type: "local"}, and run the commands on the client; POST /v1/workspaces offers this service's own sandboxes`,
          });
      })
      .transform((e) => ({ type: 'local' as const, skills: e.skills ?? undefined }))
      .nullish(),
    allowed_callers: AllowedCallers,
  })
  .strict();
export type ShellTool = z.output<typeof ShellTool>;

/** The apply_patch tool: the model writes one file operation (create, update with a diff, delete), the client applies it. */
export const ApplyPatchTool = z.object({ type: z.literal('apply_patch'), allowed_callers: AllowedCallers }).strict();

/** The local_shell tool (codex-mini's): the model writes one argv with its environment, the client runs it. */
export const LocalShellTool = z.object({ type: z.literal('local_shell') }).strict();

/**
 * The computer-use tool of OpenAI's preview: the model acts on a display of the given size one action a call, the
 * client does it and sends a screenshot back.
 */
export const ComputerUsePreviewTool = z
  .object({
    type: z.literal('computer_use_preview'),
    environment: z.enum(['windows', 'mac', 'linux', 'ubuntu', 'browser']),
    display_width: z.number().int().min(1).max(16_384),
    display_height: z.number().int().min(1).max(16_384),
  })
  .strict();
export type ComputerUsePreviewTool = z.output<typeof ComputerUsePreviewTool>;

/** The computer tool: the model acts on the client's display, several actions a call, and reads a screenshot after. */
export const ComputerTool = z.object({ type: z.literal('computer') }).strict();

/** The client-run built-in tools' types; each is offered to the lane as a function of this name. */
const CLIENT_BUILTINS = ['shell', 'apply_patch', 'local_shell', 'computer_use_preview', 'computer'] as const;
export type ClientBuiltin = (typeof CLIENT_BUILTINS)[number];
export const isClientBuiltin = (type: string): type is ClientBuiltin =>
  (CLIENT_BUILTINS as readonly string[]).includes(type);

const ShellAction = z.object({
  commands: z.array(z.string().max(MAX_MESSAGE_CHARS)).max(1000),
  timeout_ms: Positive.nullish(),
  max_output_length: Positive.nullish(),
});

/** A shell call an earlier response made, as a client sends it back. */
const ShellCallItem = z.object({
  type: z.literal('shell_call'),
  id: ItemId.nullish(),
  call_id: CallId,
  action: ShellAction,
  status: ItemStatus,
  environment: z
    .object({ type: z.string().max(100) })
    .loose()
    .nullish(),
  caller: z.unknown().optional(),
});

/** What one command printed, and how it ended (its exit code, or the time limit). */
const ShellOutputChunk = z.object({
  stdout: Printed,
  stderr: Printed,
  outcome: z.discriminatedUnion('type', [
    z.object({ type: z.literal('exit'), exit_code: z.number().int().min(-2_147_483_648).max(4_294_967_295) }),
    z.object({ type: z.literal('timeout') }),
  ]),
});

/** What the client's run of a shell call printed, command by command. */
const ShellCallOutputItem = z.object({
  type: z.literal('shell_call_output'),
  id: ItemId.nullish(),
  call_id: CallId,
  output: z.array(ShellOutputChunk).max(1000),
  status: ItemStatus,
  max_output_length: Positive.nullish(),
  caller: z.unknown().optional(),
});

/** A file's path (empty only in a call the model left without one, sent back as it was given). */
const PatchPath = z.string().max(4096);
const PatchOperation = z.discriminatedUnion('type', [
  z.object({ type: z.literal('create_file'), path: PatchPath, diff: z.string().max(MAX_MESSAGE_CHARS) }),
  z.object({ type: z.literal('update_file'), path: PatchPath, diff: z.string().max(MAX_MESSAGE_CHARS) }),
  z.object({ type: z.literal('delete_file'), path: PatchPath }),
]);

/** An apply_patch call an earlier response made, as a client sends it back. */
const ApplyPatchCallItem = z.object({
  type: z.literal('apply_patch_call'),
  id: ItemId.nullish(),
  call_id: CallId,
  status: z.enum(['in_progress', 'completed']).nullish(),
  operation: PatchOperation,
  caller: z.unknown().optional(),
});

/** Whether the client applied the operation, with what it printed. */
const ApplyPatchCallOutputItem = z.object({
  type: z.literal('apply_patch_call_output'),
  id: ItemId.nullish(),
  call_id: CallId,
  status: z.enum(['completed', 'failed']),
  output: Printed.nullish(),
  caller: z.unknown().optional(),
});

const LocalShellAction = z.object({
  type: z.literal('exec'),
  command: z.array(z.string().max(MAX_MESSAGE_CHARS)).max(1000),
  env: z
    .record(z.string().max(4096), z.string().max(65_536))
    .refine((e) => Object.keys(e).length <= 1000, 'at most 1000 variables')
    .nullish(),
  timeout_ms: Positive.nullish(),
  working_directory: z.string().max(4096).nullish(),
  user: z.string().max(256).nullish(),
});

/** A local shell call an earlier response made, as a client sends it back. */
const LocalShellCallItem = z.object({
  type: z.literal('local_shell_call'),
  id: ItemId.nullish(),
  call_id: CallId,
  action: LocalShellAction,
  status: ItemStatus,
});

/**
 * What the client's run of a local shell call printed (a JSON string, as OpenAI's). OpenAI's own form names the call
 * by `id` alone; `call_id`, when given, is the call's.
 */
const LocalShellCallOutputItem = z
  .object({
    type: z.literal('local_shell_call_output'),
    id: ItemId.nullish(),
    call_id: CallId.nullish(),
    output: Printed,
    status: ItemStatus,
  })
  .superRefine((i, ctx) => {
    if (i.call_id == null && i.id == null)
      ctx.addIssue({
        code: 'custom',
        path: ['call_id'],
        message: 'call_id (or id) names the local_shell_call answered',
      });
  });

const Coord = z.number().int().min(-1_000_000).max(1_000_000);
const Keys = z.array(z.string().max(1000)).max(1000);
/** One action on a display, as OpenAI's computer call has it. */
const ComputerAction = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('click'),
    button: z.enum(['left', 'right', 'wheel', 'back', 'forward']),
    x: Coord,
    y: Coord,
    keys: Keys.nullish(),
  }),
  z.object({ type: z.literal('double_click'), x: Coord, y: Coord, keys: Keys.nullish() }),
  z.object({
    type: z.literal('drag'),
    path: z.array(z.object({ x: Coord, y: Coord })).max(10_000),
    keys: Keys.nullish(),
  }),
  z.object({ type: z.literal('keypress'), keys: Keys }),
  z.object({ type: z.literal('move'), x: Coord, y: Coord, keys: Keys.nullish() }),
  z.object({ type: z.literal('screenshot') }),
  z.object({
    type: z.literal('scroll'),
    x: Coord,
    y: Coord,
    scroll_x: Coord,
    scroll_y: Coord,
    keys: Keys.nullish(),
  }),
  z.object({ type: z.literal('type'), text: z.string().max(MAX_MESSAGE_CHARS) }),
  z.object({ type: z.literal('wait') }),
]);
export type ComputerAction = z.output<typeof ComputerAction>;

const SafetyCheck = z.object({
  id: z.string().min(1).max(200),
  code: z.string().max(200).nullish(),
  message: z.string().max(4000).nullish(),
});

/** A computer call an earlier response made, as a client sends it back (one action, or a list of them). */
const ComputerCallItem = z
  .object({
    type: z.literal('computer_call'),
    id: ItemId.nullish(),
    call_id: CallId,
    action: ComputerAction.nullish(),
    actions: z.array(ComputerAction).max(100).nullish(),
    pending_safety_checks: z.array(SafetyCheck).max(20).nullish(),
    status: ItemStatus,
  })
  .superRefine((i, ctx) => {
    if (i.action == null && i.actions == null)
      ctx.addIssue({ code: 'custom', path: ['action'], message: 'a computer call has an action (or actions)' });
  });

/** The screenshot the client took after a computer call: by URL (http(s) or a data URL) or by an uploaded file's id. */
const ComputerCallOutputItem = z.object({
  type: z.literal('computer_call_output'),
  id: ItemId.nullish(),
  call_id: CallId,
  output: z
    .object({ type: z.literal('computer_screenshot'), image_url: ImageUrl.nullish(), file_id: FileRef.nullish() })
    .superRefine((o, ctx) => {
      if ((o.image_url == null) === (o.file_id == null))
        ctx.addIssue({ code: 'custom', path: ['image_url'], message: 'send one of image_url and file_id' });
    }),
  acknowledged_safety_checks: z.array(SafetyCheck).max(20).nullish(),
  status: z.enum(['in_progress', 'completed', 'incomplete', 'failed']).nullish(),
});

/** The client-run built-in tools' call and output items, as input. */
export const SHELL_ITEMS = [
  ComputerCallItem,
  ComputerCallOutputItem,
  ShellCallItem,
  ShellCallOutputItem,
  ApplyPatchCallItem,
  ApplyPatchCallOutputItem,
  LocalShellCallItem,
  LocalShellCallOutputItem,
] as const;
