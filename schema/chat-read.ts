import { MAX_MESSAGE_CHARS, type ChatCompletionRequest, type ChatMessage, type UtilityChatRequest } from './chat';
import type { ChatHeaders } from './headers';

/**
 * Checked readers of the chat request bodies: for the bodies that clients send (plain string
 * contents, the usual sampling fields), the value `ChatCompletionRequest` / `UtilityChatRequest`
 * would give, without zod; `undefined` for anything else (invalid input, content parts, skills,
 * an invalid profile...), which then goes through the schema, so every error answer is the
 * schema's own. The schemas stay the reference: test/unit/chat-read.test.ts compares both on
 * generated bodies and fails when a reader accepts what the schema refuses or gives another value.
 *
 * The value is built as zod builds it: the schema's keys in the schema's order, a key only when it
 * is in the input (an explicit `undefined` is kept as such), unknown keys dropped.
 */

type Plain = Record<string, unknown>;

const isPlain = (v: unknown): v is Plain => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const between = (v: unknown, min: number, max: number) => isNum(v) && v >= min && v <= max;
/** Code points, a surrogate pair counting once (zod's `max` counts these when the UTF-16 length is over). */
function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    if ((s.charCodeAt(i) & 0xfc00) === 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n--;
      i++;
    }
  }
  return n;
}
/** A string within the schema's `max` (UTF-16 length, else code points, as zod counts). */
const shortString = (v: unknown, max: number) => typeof v === 'string' && (v.length <= max || codePoints(v) <= max);
const ROLES = new Set(['system', 'developer', 'user', 'assistant']);

/** One message with a string content; undefined for anything else (content parts go to zod). */
function readMessage(v: unknown): ChatMessage | undefined {
  if (!isPlain(v)) return undefined;
  const { role, content } = v;
  if (typeof role !== 'string' || !ROLES.has(role) || !shortString(content, MAX_MESSAGE_CHARS)) return undefined;
  // A client's tool loop (assistant tool_calls, tool results) is the schema's to read.
  if ('tool_calls' in v || 'tool_call_id' in v) return undefined;
  const out: Plain = { role: role === 'developer' ? 'system' : role, content };
  if ('name' in v) {
    if (v.name !== undefined && !shortString(v.name, 64)) return undefined;
    out.name = v.name;
  }
  return out as ChatMessage;
}

/** The sampling fields in the schema's order, each with its check (undefined is allowed: optional). */
const SAMPLING: Array<[string, (v: unknown) => boolean]> = [
  ['temperature', (v) => between(v, 0, 2)],
  ['top_p', (v) => between(v, 0, 1)],
  ['max_tokens', (v) => Number.isSafeInteger(v) && between(v, 1, 65_536)],
  ['max_completion_tokens', (v) => Number.isSafeInteger(v) && between(v, 1, 65_536)],
  ['stop', (v) => shortString(v, 200) || (Array.isArray(v) && v.length <= 4 && v.every((s) => shortString(s, 200)))],
  ['presence_penalty', (v) => between(v, -2, 2)],
  ['frequency_penalty', (v) => between(v, -2, 2)],
  ['seed', (v) => Number.isSafeInteger(v)],
  ['n', (v) => v === 1],
  ['user', (v) => shortString(v, 256)],
  ['stream', (v) => typeof v === 'boolean'],
  ['store', (v) => typeof v === 'boolean'],
];

/** Fields the reader leaves to the schema whenever they are present (refusals and their checks are the schema's). */
const SCHEMA_ONLY = [
  'metadata',
  'function_call',
  'modalities',
  'audio',
  'web_search_options',
  'moderation',
  'service_tier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'safety_identifier',
  'prediction',
];

/** Sampling fields OpenAI's contract makes nullable: the schema reads null as absent. */
const NULLABLE = new Set(SAMPLING.map(([key]) => key).filter((key) => key !== 'user'));

/** `persona`: the fields of /v1/chat/completions (profile, svc_skills), else the utility lanes' body. */
function read(v: unknown, persona: boolean): Plain | undefined {
  if (!isPlain(v)) return undefined;
  const out: Plain = {};
  if ('model' in v) {
    const model = v.model;
    if (model !== undefined && !(typeof model === 'string' && model.length >= 1 && model.length <= 100))
      return undefined;
    out.model = model;
  }
  const list = v.messages;
  if (!Array.isArray(list) || list.length < 1 || list.length > 500) return undefined;
  const messages: ChatMessage[] = [];
  for (const m of list) {
    const read = readMessage(m);
    if (!read) return undefined;
    messages.push(read);
  }
  out.messages = messages;
  if (persona) {
    if ('profile' in v) {
      // The schema ignores an invalid profile (`.catch(undefined)`): the key stays, without a value.
      const p = v.profile;
      out.profile = p === null || shortString(p, 64) ? p : undefined;
    }
    if ('svc_skills' in v) {
      if (v.svc_skills !== undefined) return undefined; // skills: the schema reads them
      out.svc_skills = undefined;
    }
    // Client tools and how to choose them: the schema reads them (an empty tool list is read below).
    if ('tool_choice' in v || 'parallel_tool_calls' in v) return undefined;
  }
  for (const [key, ok] of SAMPLING) {
    if (!(key in v)) continue;
    const value = v[key];
    if (value === null && NULLABLE.has(key)) {
      out[key] = undefined;
      continue;
    }
    if (value !== undefined && !ok(value)) return undefined;
    out[key] = Array.isArray(value) ? [...(value as unknown[])] : value;
  }
  if ('stream_options' in v) {
    const o = v.stream_options;
    if (o === undefined || o === null) out.stream_options = o;
    else {
      if (!isPlain(o)) return undefined;
      const opts: Plain = {};
      if ('include_usage' in o) {
        if (o.include_usage !== undefined && typeof o.include_usage !== 'boolean') return undefined;
        opts.include_usage = o.include_usage;
      }
      out.stream_options = opts;
    }
  }
  // A response format goes through the schema (its checks are the schema's); an explicit undefined stays a key.
  if ('response_format' in v) {
    if (v.response_format !== undefined) return undefined;
    out.response_format = undefined;
  }
  // Reasoning and verbosity settings, and token biases: the schema reads them.
  if ('reasoning_effort' in v || 'verbosity' in v || 'logit_bias' in v) return undefined;
  if ('logprobs' in v || 'top_logprobs' in v) return undefined;
  // A stored completion's metadata, and the fields the schema refuses or only checks: the schema reads them.
  for (const key of SCHEMA_ONLY) if (key in v) return undefined;
  // Client tools: an empty list is read; any tool is the schema's to read (or refuse).
  for (const key of ['functions', 'tools']) {
    if (!(key in v)) continue;
    const list = v[key];
    if (list !== undefined && !(Array.isArray(list) && list.length === 0)) return undefined;
    out[key] = list === undefined ? undefined : [];
  }
  return out;
}

/** `ChatCompletionRequest`'s value for a common body, else undefined (then parse with the schema). */
export function readChatCompletionRequest(v: unknown): ChatCompletionRequest | undefined {
  return read(v, true) as ChatCompletionRequest | undefined;
}

/** `UtilityChatRequest`'s value for a common body, else undefined (then parse with the schema). */
export function readUtilityChatRequest(v: unknown): UtilityChatRequest | undefined {
  return read(v, false) as UtilityChatRequest | undefined;
}

/**
 * `ChatHeaders`' value when the request has none of its headers (the usual chat), else undefined
 * (then parse with the schema). Only the skill list has a value then: its transform gives [].
 */
export function readChatHeaders(headers: Record<string, unknown>): ChatHeaders | undefined {
  if ('x-session-id' in headers || 'x-svc-skill' in headers || 'x-timezone' in headers) return undefined;
  return { 'x-svc-skill': [] } as ChatHeaders;
}
