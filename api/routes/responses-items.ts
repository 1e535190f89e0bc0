import { createHash } from 'node:crypto';
import type { ModelResult, ModelUsage } from '../../activities/providers/types';
import { randomToken } from '../../activities/store/ids';
import type { ContentPart, FileSource, PersonaMessage } from '../../schema/chat';
import type { Config } from '../../schema/config';
import { atPart, readFileAt, readFileById, type FileReader } from './chat-parts';
import type { ResponseInputItem } from '../../schema/responses';
import { parseStorableJson } from '../../schema/storable';
import { IMAGE_GENERATION } from '../../schema/responses-image-gen';
import type { RemoteCallError, RemoteTool } from '../mcp/remote-client';
import { mcpLaneName } from './responses-mcp-names';
import {
  builtinCallItem,
  builtinInputItem,
  builtinKind,
  builtinLaneCall,
  builtinOf,
  builtinOutputText,
  screenshotMessage,
  SHOWN_SCREENSHOTS,
  type BuiltinCall,
  type BuiltinItem,
} from './responses-shell';

/**
 * Items of the Responses API as this service keeps and lists them (OpenAI's item resources): every item has an id,
 * a status and its content as parts. Reasoning items a client echoes back are not kept (their content is another
 * provider's).
 */
export type InputPart =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string; detail: 'auto' | 'low' | 'high'; file_id?: string }
  | { type: 'output_text'; text: string; annotations: unknown[]; logprobs: unknown[] }
  | { type: 'refusal'; refusal: string }
  /** Only until its text is read (`readInputFiles`): a stored item holds the text. */
  | { type: 'input_file'; file: FileSource };
export type StoredItem =
  | {
      type: 'message';
      id: string;
      status: 'completed';
      role: 'user' | 'system' | 'developer' | 'assistant';
      content: InputPart[];
    }
  | { type: 'function_call'; id: string; status: 'completed'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; id: string; status: 'completed'; call_id: string; output: string }
  | { type: 'custom_tool_call'; id: string; status: 'completed'; call_id: string; name: string; input: string }
  | { type: 'custom_tool_call_output'; id: string; status: 'completed'; call_id: string; output: string }
  /** A compaction item as sent back (its sealed summary; `compactionSummaries` opens it). */
  | { type: 'compaction'; id: string; encrypted_content: string; created_by?: string }
  | McpListTools
  | McpCall
  | McpApprovalRequest
  | McpApprovalResponse
  | ImageGenerationCall
  /** The client-run built-in tools' calls and outputs (shell, apply_patch, local_shell). */
  | BuiltinItem;

/** A remote MCP server's tools as a response listed them (sent back, the server is not listed again). */
export type McpListTools = {
  type: 'mcp_list_tools';
  id: string;
  server_label: string;
  tools: RemoteTool[];
  error: string | null;
};
/** A call of a remote MCP server's tool: what the model sent and what the server answered. */
export type McpCall = {
  type: 'mcp_call';
  id: string;
  status: 'completed' | 'failed' | 'incomplete' | 'in_progress' | 'calling';
  server_label: string;
  name: string;
  arguments: string;
  output: string | null;
  error: RemoteCallError | string | Record<string, unknown> | null;
  approval_request_id: string | null;
};
/** A call the model made that waits for the client's approval (the tool's require_approval). */
export type McpApprovalRequest = {
  type: 'mcp_approval_request';
  id: string;
  server_label: string;
  name: string;
  arguments: string;
};
/**
 * An image the model asked for (the image_generation tool) and the service made: the image's base64 in `result`, the
 * prompt it was made from, and the settings it was made with (OpenAI's item has them too).
 */
export type ImageGenerationCall = {
  type: 'image_generation_call';
  id: string;
  status: 'in_progress' | 'generating' | 'completed' | 'failed';
  result: string | null;
  revised_prompt?: string | null;
  size?: string | null;
  quality?: string | null;
  background?: string | null;
  output_format?: string | null;
};
/** The client's answer to an approval request. */
export type McpApprovalResponse = {
  type: 'mcp_approval_response';
  id: string;
  approval_request_id: string;
  approve: boolean;
  reason: string | null;
};

/** Where each kept item came from in the request (`body.input.N`), for errors about its images. */
export interface NormalizedInput {
  items: StoredItem[];
  /** The request's index of each kept item. */
  origin: number[];
}

export const itemId = (
  prefix: 'msg' | 'fc' | 'fco' | 'ctc' | 'ctco' | 'cmp' | 'fs' | 'ws' | 'mcpl' | 'mcp' | 'mcpr' | 'mcpa' | 'ig',
) => `${prefix}_${randomToken(24)}`;
const ID_PREFIX = {
  function_call: 'fc',
  function_call_output: 'fco',
  custom_tool_call: 'ctc',
  custom_tool_call_output: 'ctco',
} as const;

/** A response's (and its items') status from the lane's finish reason: cut short at the token limit is incomplete. */
export const responseStatus = (finish: string): 'completed' | 'incomplete' =>
  finish === 'length' ? 'incomplete' : 'completed';

/** The request's input as items with ids (a string is one user message). */
export function normalizeInput(input: string | ResponseInputItem[]): NormalizedInput {
  if (typeof input === 'string')
    return {
      items: [
        { type: 'message', id: itemId('msg'), status: 'completed', role: 'user', content: textParts('user', input) },
      ],
      origin: [0],
    };
  const items: StoredItem[] = [];
  const origin: number[] = [];
  input.forEach((item, i) => {
    const kept = normalizeItem(item);
    if (!kept) return;
    items.push(kept);
    origin.push(i);
  });
  return { items, origin };
}

function textParts(role: 'user' | 'system' | 'developer' | 'assistant', text: string): InputPart[] {
  return role === 'assistant'
    ? [{ type: 'output_text', text, annotations: [], logprobs: [] }]
    : [{ type: 'input_text', text }];
}

function normalizeItem(item: ResponseInputItem): StoredItem | undefined {
  switch (item.type) {
    case 'message': {
      const content: InputPart[] =
        typeof item.content === 'string'
          ? textParts(item.role, item.content)
          : item.content.map((p): InputPart => {
              if (p.type === 'input_image')
                return {
                  type: 'input_image',
                  image_url: p.image_url ?? '',
                  detail: p.detail ?? 'auto',
                  ...(p.file_id != null ? { file_id: p.file_id } : {}),
                };
              if (p.type === 'output_text') return { type: 'output_text', text: p.text, annotations: [], logprobs: [] };
              if (p.type === 'refusal') return { type: 'refusal', refusal: p.refusal };
              if (p.type === 'input_file')
                return {
                  type: 'input_file',
                  file: {
                    file_data: p.file_data ?? undefined,
                    file_url: p.file_url ?? undefined,
                    file_id: p.file_id ?? undefined,
                    filename: p.filename ?? undefined,
                  },
                };
              return { type: 'input_text', text: (p as { text: string }).text };
            });
      return { type: 'message', id: item.id ?? itemId('msg'), status: 'completed', role: item.role, content };
    }
    case 'function_call':
    case 'function_call_output':
    case 'custom_tool_call':
    case 'custom_tool_call_output': {
      // Calls and outputs are kept as they came (zod has dropped unknown keys), with an id and a status.
      const { id, status: _status, ...fields } = item;
      return { ...fields, id: id ?? itemId(ID_PREFIX[item.type]), status: 'completed' } as StoredItem;
    }
    case 'compaction':
      return {
        type: 'compaction',
        id: item.id ?? itemId('cmp'),
        encrypted_content: item.encrypted_content,
        ...(item.created_by != null ? { created_by: item.created_by } : {}),
      };
    case 'mcp_list_tools':
      return {
        type: 'mcp_list_tools',
        id: item.id ?? itemId('mcpl'),
        server_label: item.server_label,
        tools: item.tools.map((t) => ({
          name: t.name,
          description: t.description ?? null,
          input_schema: t.input_schema,
          annotations: t.annotations ?? null,
        })),
        error: item.error ?? null,
      };
    case 'mcp_call':
      return {
        type: 'mcp_call',
        id: item.id ?? itemId('mcp'),
        status: item.status ?? 'completed',
        server_label: item.server_label,
        name: item.name,
        arguments: item.arguments,
        output: item.output ?? null,
        error: item.error ?? null,
        approval_request_id: item.approval_request_id ?? null,
      };
    case 'mcp_approval_request':
      return { ...item };
    case 'image_generation_call':
      return {
        type: 'image_generation_call',
        id: item.id,
        status: item.status ?? 'completed',
        result: item.result ?? null,
        ...(item.revised_prompt != null ? { revised_prompt: item.revised_prompt } : {}),
        ...(item.size != null ? { size: item.size } : {}),
        ...(item.quality != null ? { quality: item.quality } : {}),
        ...(item.background != null ? { background: item.background } : {}),
        ...(item.output_format != null ? { output_format: item.output_format } : {}),
      };
    case 'shell_call':
    case 'shell_call_output':
    case 'apply_patch_call':
    case 'apply_patch_call_output':
    case 'local_shell_call':
    case 'local_shell_call_output':
    case 'computer_call':
    case 'computer_call_output':
      return builtinInputItem(item);
    case 'mcp_approval_response':
      return {
        type: 'mcp_approval_response',
        id: item.id ?? itemId('mcpa'),
        approval_request_id: item.approval_request_id,
        approve: item.approve,
        reason: item.reason ?? null,
      };
    default:
      return undefined; // reasoning
  }
}

/** What the model reads of an MCP call that failed. */
function mcpErrorText(error: McpCall['error']): string {
  if (typeof error === 'string') return error;
  const e = error as { message?: unknown; content?: unknown } | null;
  if (typeof e?.message === 'string') return e.message;
  return JSON.stringify(e?.content ?? e ?? 'failed');
}

/** A call this service made (an MCP server's, an image) as the lane's tool call and the tool's answer to it. */
type CallMessages = {
  call: { id: string; type: 'function'; function: { name: string; arguments: string } };
  answer: PersonaMessage;
};

/** The lane's call of function `name` under the item's id (see laneCallId), and `content` as the tool's answer. */
function callMessages(itemIdValue: string, name: string, args: string, content: string): CallMessages {
  const id = laneCallId(itemIdValue);
  return {
    call: { id, type: 'function', function: { name, arguments: args } },
    answer: { role: 'tool', content, tool_call_id: id },
  };
}

const NOT_MADE = 'Not made: the response ended, or spent its tool call budget (max_tool_calls), before this call.';

/** An MCP call as the lane's tool call and the tool's answer (its output, or its error). */
export function mcpCallMessages(item: McpCall): CallMessages {
  return callMessages(
    item.id,
    mcpLaneName(item.server_label, item.name),
    item.arguments,
    item.status === 'incomplete'
      ? NOT_MADE
      : item.error != null
        ? `Error: ${item.output || mcpErrorText(item.error)}`
        : (item.output ?? ''),
  );
}

/**
 * An image generation call as the lane's call of its function (the prompt the image was made from) and the tool's
 * answer: the image itself goes to the client, never back to the lane.
 */
export function imageCallMessages(item: ImageGenerationCall): CallMessages {
  const why = imageFailures.get(item);
  return callMessages(
    item.id,
    IMAGE_GENERATION,
    JSON.stringify({ prompt: item.revised_prompt ?? '' }),
    item.status === 'completed'
      ? 'The image was made and shown to the user (you do not see it). Do not repeat its data; say what it shows if that helps.'
      : item.status === 'failed'
        ? `The image could not be made${why ? `: ${why}` : '.'}`
        : NOT_MADE,
  );
}

/** Why an image generation call of this response failed (what the model is told; the item has no field for it). */
export const imageFailures = new WeakMap<ImageGenerationCall, string>();

/** A server-run tool's call (an MCP server's, image generation) as the lane's call and the tool's answer. */
export const serverCallMessages = (item: McpCall | ImageGenerationCall) =>
  item.type === 'mcp_call' ? mcpCallMessages(item) : imageCallMessages(item);

/**
 * An item's id as the lane's tool call id: as it is up to 40 characters (OpenAI's limit on a call id), else `mcp_` and
 * a hash of it, the same for the call and its answer.
 */
function laneCallId(id: string): string {
  return id.length <= 40 ? id : `mcp_${createHash('sha256').update(id).digest('hex').slice(0, 32)}`;
}

/**
 * The assistant turn a call joins: the message just before it when that is the assistant's, or the assistant turn
 * before the tool answers that end the list when some of its calls are not answered yet (calls of one round: a client's
 * call is answered in a later request, an MCP call at once). Undefined: the call starts a turn.
 */
function openTurn(messages: PersonaMessage[]): PersonaMessage | undefined {
  let at = messages.length - 1;
  while (at >= 0 && messages[at].role === 'tool') at--;
  const owner = messages[at];
  if (owner?.role !== 'assistant') return undefined;
  if (at === messages.length - 1) return owner;
  const answered = new Set(messages.slice(at + 1).map((m) => m.tool_call_id));
  return owner.tool_calls?.some((c) => !answered.has(c.id)) ? owner : undefined;
}

/** A message part's text as a chat message carries it. */
function partText(p: InputPart): string {
  if (p.type === 'refusal') return p.refusal;
  return p.type === 'input_image' || p.type === 'input_file' ? '' : p.text;
}

/** Screenshots read from an uploaded file (an error about the image names the file id the client gave). */
const readFromFile = new WeakSet<object>();
export const screenshotFromFile = (output: object) => readFromFile.has(output);

/**
 * The files of the input read into text (`input_text` parts in their place: what the model got, and what the stored
 * response keeps), and images given by file id made data URLs (the image loader checks them as any other).
 * @throws AppError as readAttachedFile, naming `body.input.N.content.M`; not_found for an unknown file id
 */
export async function readInputFiles(
  input: NormalizedInput,
  config: Config,
  files?: FileReader,
  /** Where the items are in the request (errors name it). */
  field = 'body.input',
): Promise<void> {
  const reads: Array<Promise<void>> = [];
  // Of the screenshots given by file id, only those the lane may be shown (the latest) are read; the others keep their
  // id (a client resending a long computer-use history does not make the service read every screenshot again).
  const shots = input.items.filter((item) => item.type === 'computer_call_output');
  const read = new Set(shots.slice(-SHOWN_SCREENSHOTS));
  input.items.forEach((item, k) => {
    if (item.type === 'computer_call_output' && item.output.file_id !== undefined) {
      if (!read.has(item)) return;
      const output = item.output;
      const id = output.file_id!;
      reads.push(
        readFileById(files, id).then(
          (f) => {
            // As an input image given by id: the stored item holds the image, not the id.
            output.image_url = dataUrl(f);
            delete output.file_id;
            readFromFile.add(output);
          },
          (err: unknown) => Promise.reject(atPart(err, `${field}.${input.origin[k]}.output.file_id`)),
        ),
      );
      return;
    }
    if (item.type !== 'message') return;
    item.content.forEach((part, j) => {
      const where = `${field}.${input.origin[k]}.content.${j}`;
      if (part.type === 'input_file')
        reads.push(
          readFileAt(part.file, config, where, files).then(
            (text) => void (item.content[j] = { type: 'input_text', text }),
          ),
        );
      else if (part.type === 'input_image' && part.file_id !== undefined) {
        const id = part.file_id;
        reads.push(
          readFileById(files, id).then(
            (f) => void (item.content[j] = { type: 'input_image', image_url: dataUrl(f), detail: part.detail }),
            (err: unknown) => Promise.reject(atPart(err, `${where}.file_id`)),
          ),
        );
      }
    });
  });
  await Promise.all(reads);
}

/** A stored file as a data URL (its sniffed type; the image loader refuses what is not an image). */
const dataUrl = (f: { bytes: Buffer; contentType: string }) =>
  `data:${f.contentType};base64,${f.bytes.toString('base64')}`;

/** A computer call's output whose screenshot the lane is shown (it has its image by then). */
type ScreenshotShown = Parameters<typeof screenshotMessage>[0];

/** How a compaction item's summary is put before the lane (a user turn: every chat lane takes one anywhere). */
export const COMPACTION_HEADING =
  '[Context checkpoint: the earlier part of this conversation was compacted into this summary; continue from it.]';

/**
 * Items as chat messages: instructions first as a system message, developer messages as system ones, consecutive
 * function calls as one assistant turn with `tool_calls` (joined to the assistant message just before them), their
 * outputs as tool messages. `source[k]` is the index in `items` of message k (the instructions have -1).
 */
export function itemsToMessages(
  items: StoredItem[],
  instructions: string | undefined,
  /** The summaries of the compaction items among `items` (`compactionSummaries`): each stands where its item is. */
  summaries?: ReadonlyMap<StoredItem, string>,
): { messages: PersonaMessage[]; source: number[] } {
  const messages: PersonaMessage[] = [];
  const source: number[] = [];
  if (instructions !== undefined) {
    messages.push({ role: 'system', content: instructions });
    source.push(-1);
  }
  // Screenshots of computer calls wait until the turn's tool answers are all given (a user message between them would
  // split the turn): they go in just before the next message that is not a tool answer, each standing where the item
  // that brought it is. Only the latest few are shown (SHOWN_SCREENSHOTS); earlier ones are a line of text.
  const screenshots: Array<{ message: PersonaMessage; at: number }> = [];
  const flushScreenshots = () => {
    for (const s of screenshots.splice(0)) {
      messages.push(s.message);
      source.push(s.at);
    }
  };
  const add = (message: PersonaMessage, at: number) => {
    if (message.role !== 'tool') flushScreenshots();
    messages.push(message);
    source.push(at);
  };
  const shots = items.flatMap((item) => (item.type === 'computer_call_output' ? [item] : []));
  const shown = new Set(shots.slice(-SHOWN_SCREENSHOTS).filter((item) => item.output.image_url));
  items.forEach((item, i) => {
    if (item.type === 'computer_call_output') {
      const image = shown.has(item);
      add({ role: 'tool', content: builtinOutputText(item, image), tool_call_id: item.call_id }, i);
      if (image) screenshots.push({ message: screenshotMessage(item as ScreenshotShown), at: i });
      return;
    }
    if (
      item.type === 'function_call' ||
      item.type === 'custom_tool_call' ||
      item.type === 'shell_call' ||
      item.type === 'apply_patch_call' ||
      item.type === 'local_shell_call' ||
      item.type === 'computer_call'
    ) {
      // A custom tool is a function of one string parameter to the lane (customAsFunction in responses.ts); a built-in
      // client tool is a function of its type's name, its action the arguments.
      const call =
        item.type === 'function_call' || item.type === 'custom_tool_call'
          ? {
              id: item.call_id,
              type: 'function' as const,
              function: {
                name: item.name,
                arguments: item.type === 'function_call' ? item.arguments : JSON.stringify({ input: item.input }),
              },
            }
          : builtinLaneCall(item);
      const turn = openTurn(messages);
      if (turn) {
        turn.tool_calls = [...(turn.tool_calls ?? []), call];
        return;
      }
      add({ role: 'assistant', content: null, tool_calls: [call] }, i);
      return;
    }
    if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
      add({ role: 'tool', content: item.output, tool_call_id: item.call_id }, i);
      return;
    }
    if (
      item.type === 'shell_call_output' ||
      item.type === 'apply_patch_call_output' ||
      item.type === 'local_shell_call_output'
    ) {
      add({ role: 'tool', content: builtinOutputText(item), tool_call_id: item.call_id }, i);
      return;
    }
    if (item.type === 'mcp_call' || item.type === 'image_generation_call') {
      // A call made on an MCP server, or an image made: the lane's call and the tool's answer, as a function call and
      // its output. Its answer follows at once: every call of a turn is answered before the next turn.
      const { call, answer } = serverCallMessages(item);
      const turn = openTurn(messages);
      if (turn) turn.tool_calls = [...(turn.tool_calls ?? []), call];
      else {
        add({ role: 'assistant', content: null, tool_calls: [call] }, i);
      }
      add(answer, i);
      return;
    }
    // A list of an MCP server's tools is read where the tools are offered; an approval request and its answer are
    // read when the answer comes (the approved call is then made, and its item stands for both).
    if (item.type === 'mcp_list_tools' || item.type === 'mcp_approval_request' || item.type === 'mcp_approval_response')
      return;
    if (item.type === 'compaction') {
      const summary = summaries?.get(item);
      if (summary !== undefined) {
        add({ role: 'user', content: `${COMPACTION_HEADING}\n\n${summary}` }, i);
      }
      return;
    }
    const role = item.role === 'developer' ? 'system' : item.role;
    const content: string | ContentPart[] = item.content.some((p) => p.type === 'input_image')
      ? item.content.map((p): ContentPart =>
          p.type === 'input_image'
            ? { type: 'image_url', image_url: { url: p.image_url, detail: p.detail } }
            : { type: 'text', text: partText(p) },
        )
      : item.content.map(partText).join('\n');
    add({ role, content }, i);
  });
  flushScreenshots();
  return { messages, source };
}

export type OutputItem =
  | {
      type: 'message';
      id: string;
      status: 'completed' | 'incomplete';
      role: 'assistant';
      content: Array<{ type: 'output_text'; text: string; annotations: unknown[]; logprobs: unknown[] }>;
    }
  | {
      type: 'function_call';
      id: string;
      status: 'completed' | 'incomplete';
      call_id: string;
      name: string;
      arguments: string;
    }
  | {
      type: 'custom_tool_call';
      id: string;
      status: 'completed' | 'incomplete';
      call_id: string;
      name: string;
      input: string;
    }
  | FileSearchCall
  | WebSearchCall
  | McpListTools
  | McpCall
  | McpApprovalRequest
  | ImageGenerationCall
  | BuiltinCall;

/** A call the client runs, as its output item: a function's, a custom tool's, or a built-in client tool's. */
export type ClientCallItem = Extract<OutputItem, { type: 'function_call' | 'custom_tool_call' }> | BuiltinCall;

/** OpenAI's web_search_call output item (a search of the configured engines made before the lane answered). */
export interface WebSearchCall {
  type: 'web_search_call';
  id: string;
  status: 'completed';
  action: { type: 'search'; query: string; queries: string[]; sources?: Array<{ type: 'url'; url: string }> };
}

/** OpenAI's file_search_call output item (a search of the tenant's vector stores made before the lane answered). */
export interface FileSearchCall {
  type: 'file_search_call';
  id: string;
  status: 'completed';
  queries: string[];
  results: Array<{
    file_id: string;
    filename: string;
    score: number;
    text: string;
    attributes: Record<string, string | number | boolean> | null;
  }> | null;
}

/**
 * A search made before the lane (file_search_call, web_search_call) as the answer's lead: its item, OpenAI's events for
 * it (added, in_progress, searching, completed, done), and the annotations it gives the answer's text.
 */
export function searchLead(item: FileSearchCall | WebSearchCall, annotate: (text: string) => unknown[]): AnswerLead {
  return {
    items: [item],
    emit(emit, first) {
      const at = { output_index: first, item_id: item.id };
      emit('response.output_item.added', { output_index: first, item: { ...item, status: 'in_progress' } });
      for (const phase of ['in_progress', 'searching', 'completed']) emit(`response.${item.type}.${phase}`, at);
      emit('response.output_item.done', { output_index: first, item });
    },
    annotate,
  };
}

/**
 * What an answer starts with, before the lane's own output (a file search done before the lane was called): its
 * items, their stream events, and the annotations they give the answer's text.
 */
export interface AnswerLead {
  items: OutputItem[];
  /** Sends the items' events, the first at output index `first`. */
  emit(emit: (type: string, data: Record<string, unknown>) => void, first: number): void;
  annotate(text: string): unknown[];
}

/**
 * A custom tool's input from the call the lane made of its function form: the `input` string of the arguments, or
 * the arguments as written when the model wrote something else.
 */
export function customInput(args: string): string {
  try {
    const v = parseStorableJson(args);
    if (v !== null && typeof v === 'object' && typeof (v as { input?: unknown }).input === 'string')
      return (v as { input: string }).input;
  } catch {
    // not JSON: the text is the input
  }
  return args;
}

/**
 * A call of the lane as its output item: a custom_tool_call for a custom tool's name, a shell_call, apply_patch_call or
 * local_shell_call for a built-in client tool offered (`kinds` holds its entry, `builtinKind`), else a function_call.
 */
export function callItem(
  call: { id: string; function: { name: string; arguments: string } },
  kinds: ReadonlySet<string>,
  status: 'completed' | 'incomplete' | 'in_progress',
  id?: string,
): ClientCallItem {
  const { name, arguments: args } = call.function;
  const builtin = builtinOf(name, kinds);
  if (builtin) {
    const local = builtin === 'shell' && kinds.has(`${builtinKind('shell')}:local`);
    return builtinCallItem(builtin, call, status, local ? { type: 'local' } : null, id);
  }
  // A function's or custom tool's call cut short is incomplete; one still streaming is shown completed (OpenAI's).
  if (status === 'in_progress') status = 'completed';
  return kinds.has(name)
    ? { type: 'custom_tool_call', id: id ?? itemId('ctc'), status, call_id: call.id, name, input: customInput(args) }
    : { type: 'function_call', id: id ?? itemId('fc'), status, call_id: call.id, name, arguments: args };
}

/**
 * The log probabilities of answer tokens as the Responses API gives them (a list of tokens with their top
 * alternatives): the chat form's `content` list, which has the same entries; empty when the lane gave none.
 */
export function textLogprobs(lp: unknown): unknown[] {
  const content = (lp as { content?: unknown } | null | undefined)?.content;
  return Array.isArray(content) ? content : [];
}

/** The lane's answer as output items: the text as one assistant message, then each tool call offered. */
export function outputItems(
  result: Pick<ModelResult, 'content' | 'tool_calls' | 'finish_reason' | 'logprobs'>,
  toolsOffered: boolean,
  custom: ReadonlySet<string>,
  lead?: AnswerLead,
): OutputItem[] {
  const status = responseStatus(result.finish_reason);
  const calls = toolsOffered ? (result.tool_calls ?? []) : [];
  const out: OutputItem[] = [...(lead?.items ?? [])];
  if (result.content || !calls.length)
    out.push({
      type: 'message',
      id: itemId('msg'),
      status,
      role: 'assistant',
      content: [
        {
          type: 'output_text',
          text: result.content,
          annotations: lead?.annotate(result.content) ?? [],
          logprobs: textLogprobs(result.logprobs),
        },
      ],
    });
  for (const c of calls) out.push(callItem(c, custom, status));
  return out;
}

/** Output items as items of the next response's history (a search is left out: the answer carries what it found). */
export function outputAsInput(items: OutputItem[]): StoredItem[] {
  return items.flatMap((o): StoredItem[] =>
    o.type === 'file_search_call' || o.type === 'web_search_call' ? [] : [outputAsItem(o)],
  );
}

function outputAsItem(o: Exclude<OutputItem, FileSearchCall | WebSearchCall>): StoredItem {
  return o.type === 'message'
    ? {
        type: 'message',
        id: o.id,
        status: 'completed',
        role: 'assistant',
        content: o.content.map((c) => ({ type: 'output_text', text: c.text, annotations: [], logprobs: [] })),
      }
    : o.type === 'function_call' || o.type === 'custom_tool_call'
      ? { ...o, status: 'completed' }
      : o;
}

/** OpenAI's usage block of a response. */
export function responseUsage(u: ModelUsage) {
  return {
    input_tokens: u.prompt_tokens,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: u.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.total_tokens,
  };
}

/** Why a response stopped short (a finish reason other than stop or tool calls), as OpenAI names it. */
export function incompleteReason(finish: string): string | undefined {
  if (finish === 'length') return 'max_output_tokens';
  if (finish === 'content_filter') return 'content_filter';
  return undefined;
}

/** Where a response stands: what changes between its queued object and its last one. */
export interface ResponseOutcome {
  status: 'queued' | 'in_progress' | 'completed' | 'incomplete' | 'failed' | 'cancelled';
  output: unknown[];
  usage: ModelUsage | null;
  finish: string;
  /** The provider that answered, once known (the meta block's `provider`). */
  provider?: string;
  error?: { code: string; message: string };
}

/**
 * A Response object with its outcome fields set (status, completed_at, error, incomplete_details, output, usage and
 * the meta block's provider) over `base`, which holds the request's settings echoed (see the responses route).
 */
export function withOutcome<T extends Record<string, unknown>>(base: T, r: ResponseOutcome) {
  const reason = r.status === 'incomplete' ? incompleteReason(r.finish) : undefined;
  const running = r.status === 'queued' || r.status === 'in_progress';
  return {
    ...base,
    status: r.status,
    completed_at: running ? null : Math.floor(Date.now() / 1000),
    error: r.error ?? null,
    incomplete_details: reason ? { reason } : null,
    output: r.output,
    ...(r.usage ? { usage: responseUsage(r.usage) } : {}),
    ...(r.provider !== undefined ? { meta: { ...(base.meta as object), provider: r.provider } } : {}),
  };
}
