import { z } from 'zod';
import { readableText } from './storable';

/**
 * Characters in one message's text (OpenAI takes up to 10 MiB): a coding agent's turn can hold whole files. The
 * body as a whole is capped by SVC_CHAT_BODY_LIMIT.
 */
export const MAX_MESSAGE_CHARS = 1_048_576;

/** Text content: a string, or OpenAI content parts of type text (joined). Other part types are refused. */
const Content = z
  .union([
    z.string().max(MAX_MESSAGE_CHARS),
    z
      .array(z.object({ type: z.literal('text'), text: z.string().max(MAX_MESSAGE_CHARS) }))
      .max(100)
      .transform((parts) => parts.map((p) => p.text).join('\n')),
  ])
  .describe('Message text (a string, or an array of text parts).');

export const ChatMessage = z
  .object({
    // OpenAI's `developer` (what its newer models take instead of `system`) is read as `system`.
    role: z.enum(['system', 'developer', 'user', 'assistant']).transform((r) => (r === 'developer' ? 'system' : r)),
    content: Content,
    name: z.string().max(64).optional(),
  })
  .meta({ id: 'ChatMessage' });
export type ChatMessage = z.output<typeof ChatMessage>;

/** OpenAI's name rule (functions, response formats). */
export const openaiName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, '1 to 64 of a-z, A-Z, 0-9, underscore and dash');
/** A JSON Schema a client hands the lane (tool parameters, a response format): any object, at most 64 KB. */
export const clientJsonSchema = z
  .record(z.string(), z.unknown())
  .refine((v) => JSON.stringify(v).length <= 65_536, 'at most 64 KB of JSON');

/**
 * A tool call as an assistant message carries it (and as the answer gives it). Clients echo back the calls they were
 * given, some with keys of their own (`index` from a stream's deltas): those are dropped, not refused.
 */
export const ToolCall = z
  .object({
    id: z.string().min(1).max(200),
    type: z.literal('function').default('function'),
    function: z.object({ name: openaiName, arguments: z.string().max(MAX_MESSAGE_CHARS) }),
  })
  .meta({ id: 'ToolCall' });

/** An image's URL in a message: an http(s) URL (fetched through the fetch guard) or a base64 data URL. */
export const ImageUrl = z
  .string()
  .max(15_000_000)
  .refine(
    (u) => /^https?:\/\//i.test(u) || /^data:image\/[A-Za-z0-9.+-]{1,40};base64,/i.test(u),
    'an http(s) URL or a data:image/...;base64, URL',
  );

/** OpenAI's image part: an http(s) URL (fetched through the fetch guard) or a base64 data URL. */
export const ImagePart = z
  .object({
    type: z.literal('image_url'),
    image_url: z
      .object({
        url: ImageUrl,
        detail: z.enum(['auto', 'low', 'high']).optional(),
      })
      .strict(),
  })
  .strict();
/** A file's bytes in a message: base64, bare or as a data URL (decoded size checked against SVC_UPLOAD_LIMIT). */
export const FileData = z
  .string()
  .min(1)
  .max(45_000_000)
  .refine(
    (d) => /^(data:[A-Za-z0-9.+/-]{1,100};base64,)?[A-Za-z0-9+/=\s]+$/.test(d.slice(0, 200)),
    'base64, bare or as a data: URL',
  );

/** A file uploaded to /v1/files, by its id. */
export const FileRef = z.string().regex(/^file-[A-Za-z0-9]{1,100}$/, 'a file id (file-...) from POST /v1/files');

/**
 * OpenAI's file part: a document (PDF, DOCX, text, markdown, HTML) as base64 `file_data`, or a file uploaded to
 * /v1/files by `file_id`. Its text is read by the document parsers and given to the lane in its place.
 */
export const FilePart = z
  .object({
    type: z.literal('file'),
    file: z
      .object({
        file_data: FileData.optional(),
        filename: z.string().max(255).optional(),
        file_id: FileRef.optional(),
      })
      .strict()
      .superRefine((f, ctx) => {
        if ((f.file_id === undefined) === (f.file_data === undefined))
          ctx.addIssue({ code: 'custom', path: ['file_data'], message: 'send one of file_data and file_id' });
      }),
  })
  .strict();
/** A file as the loader takes it: its bytes (base64), a file of /v1/files, or (Responses API) a URL. */
export interface FileSource {
  file_data?: string;
  file_url?: string;
  file_id?: string;
  filename?: string;
}
/** A part of a message's content as the persona route passes it on (files become text before the lane). */
export type ContentPart =
  { type: 'text'; text: string } | z.output<typeof ImagePart> | { type: 'file'; file: FileSource };
/** A part once files are read: text or an image, what the lane takes. */
export type LoadedPart = Exclude<ContentPart, { type: 'file' }>;
/** A message once its files are read (text) and its images loaded (data URLs). */
export type LoadedMessage = Omit<PersonaMessage, 'content'> & { content: string | LoadedPart[] | null };
/** Images a request may carry in all (each is fetched or decoded, then normalised). */
export const MAX_IMAGES = 8;
/** Files a request may carry in all (each is read by the document parsers). */
export const MAX_FILES = 8;

/**
 * Content of the persona route: a string, or parts. Text parts alone are joined into one string, as before; with an
 * image part the parts stay parts (the lane's model must take images, as with OpenAI).
 */
const PersonaContent = z
  .union([
    z.string().max(MAX_MESSAGE_CHARS),
    z
      .array(
        z.discriminatedUnion('type', [
          z.object({ type: z.literal('text'), text: z.string().max(MAX_MESSAGE_CHARS) }),
          ImagePart,
          FilePart,
        ]),
      )
      .max(100)
      .transform((parts): string | ContentPart[] =>
        parts.some((p) => p.type !== 'text') ? parts : parts.map((p) => (p as { text: string }).text).join('\n'),
      ),
  ])
  .describe('Message text (a string, or an array of text parts; a user message may add image_url and file parts).');

/**
 * A message of /v1/chat/completions: the text roles as above, plus what a client's tool loop sends back: an
 * assistant turn holding `tool_calls` (its content may then be null or absent), and `tool` messages answering them
 * by `tool_call_id`.
 */
export const PersonaChatMessage = z
  .object({
    role: z
      .enum(['system', 'developer', 'user', 'assistant', 'tool'])
      .transform((r) => (r === 'developer' ? 'system' : r)),
    content: PersonaContent.nullish(),
    name: z.string().max(64).optional(),
    tool_calls: z.array(ToolCall).min(1).max(128).optional(),
    tool_call_id: z.string().min(1).max(200).optional(),
  })
  .superRefine((m, ctx) => {
    if (m.tool_calls && m.role !== 'assistant')
      ctx.addIssue({ code: 'custom', path: ['tool_calls'], message: 'only an assistant message carries tool_calls' });
    if (m.role === 'tool' && m.tool_call_id === undefined)
      ctx.addIssue({ code: 'custom', path: ['tool_call_id'], message: 'a tool message names the call it answers' });
    if (m.role !== 'tool' && m.tool_call_id !== undefined)
      ctx.addIssue({ code: 'custom', path: ['tool_call_id'], message: 'only a tool message carries tool_call_id' });
    if (Array.isArray(m.content) && m.role !== 'user')
      ctx.addIssue({
        code: 'custom',
        path: ['content'],
        message: 'only a user message may carry image and file parts',
      });
    if ((m.content === null || m.content === undefined) && !(m.role === 'assistant' && m.tool_calls))
      ctx.addIssue({
        code: 'custom',
        path: ['content'],
        message: 'content is required (only an assistant message with tool_calls may leave it null)',
      });
  })
  .transform((m) => {
    // A tool's output is text another program wrote (a binary file read by a client's tool holds NULs): made
    // readable as pages and documents are (NUL dropped, a lone surrogate as U+FFFD), not refused.
    const content = m.role === 'tool' && typeof m.content === 'string' ? readableText(m.content) : m.content;
    const out: PersonaMessage = { role: m.role, content: content ?? null };
    if ('name' in m) out.name = m.name; // an explicit undefined stays a key, as zod keeps it
    if (m.tool_calls) out.tool_calls = m.tool_calls;
    if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
    return out;
  })
  .meta({ id: 'PersonaChatMessage' });
/** A message as the persona route passes it on: content null only beside tool_calls. */
export interface PersonaMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** Parts only on a user message with an image. */
  content: string | ContentPart[] | null;
  name?: string;
  tool_calls?: Array<z.output<typeof ToolCall>>;
  tool_call_id?: string;
}

/** A client tool, as OpenAI's `tools` items: a function with a JSON Schema for its arguments (at most 64 KB). */
export const ClientTool = z
  .object({
    type: z.literal('function'),
    function: z
      .object({
        name: openaiName,
        description: z.string().max(4000).optional(),
        parameters: clientJsonSchema.optional(),
        strict: z.boolean().nullish(),
      })
      .strict(),
  })
  .strict()
  .meta({ id: 'ClientTool' });

/** OpenAI's `tool_choice`. */
export const ToolChoice = z
  .union([
    z.enum(['none', 'auto', 'required']),
    z.object({ type: z.literal('function'), function: z.object({ name: openaiName }).strict() }).strict(),
  ])
  .meta({ id: 'ToolChoice' });

export const CustomSkill = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9 _-]{0,47}$/, 'letters, digits, space, _ and - (at most 48)'),
    instructions: z.string().trim().min(1).max(4000),
    description: z.string().max(200).optional(),
  })
  .strict()
  .meta({ id: 'CustomSkill' })
  .describe('An inline user skill: a named block of instructions applied to this request only.');

export const SvcSkills = z
  .object({
    enabled: z
      .array(z.string().min(1).max(64))
      .max(16)
      .optional()
      .describe('Built-in skill ids; each must be allowed on the surface.'),
    custom: z
      .array(CustomSkill)
      .max(5)
      .refine(
        (skills) => skills.reduce((n, s) => n + s.instructions.length, 0) <= 8000,
        'custom skills may hold at most 8000 characters in all',
      )
      .optional(),
  })
  .strict()
  .meta({ id: 'SvcSkills' });

/**
 * OpenAI's `response_format` (Structured Outputs): passed to the lane as given. The schema itself is the client's
 * (any JSON object, at most 64 KB); the name follows OpenAI's rule.
 */
export const ResponseFormat = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('text') }).strict(),
    z.object({ type: z.literal('json_object') }).strict(),
    z
      .object({
        type: z.literal('json_schema'),
        json_schema: z
          .object({
            name: openaiName,
            description: z.string().max(4000).optional(),
            schema: clientJsonSchema.optional(),
            strict: z.boolean().nullish(),
          })
          .strict(),
      })
      .strict(),
  ])
  .meta({ id: 'ResponseFormat' })
  .describe('text, json_object or json_schema, as in OpenAI; passed to the lane, whose model must support it.');

/**
 * Client tools on the routes that call none (the utility lanes and the commons lane): a list with any is refused
 * rather than dropped, which would leave a client's agent loop waiting for calls that never come. An empty list is
 * fine. The older `functions` is refused on every route, pointing at `tools`.
 */
const noClientTools = (field: 'tools' | 'functions', where: string) =>
  z
    .array(z.unknown())
    .max(0, `this route does not call client ${field} (its lane answers in text); ${where}`)
    .optional();
const TOOLS_ELSEWHERE =
  'send none, or use POST /v1/chat/completions (client tools), POST /v1/slm/commons/completions (server-side ' +
  'tools), POST /v1/capabilities/agent or POST /v1/mcp';
const FUNCTIONS_DEPRECATED = 'send `tools` instead (OpenAI deprecated `functions`), or none';

/** A field OpenAI's contract makes nullable: null is taken as absent (clients that serialise None send it). */
export const nullable = <T extends z.ZodType>(t: T) => t.nullish().transform((v) => v ?? undefined);

/** OpenAI's metadata: at most 16 string pairs, keys up to 64 characters, values up to 512. */
export const Metadata = z
  .record(z.string().max(64), z.string().max(512))
  .refine((m) => Object.keys(m).length <= 16, 'at most 16 keys');

/** A field this service cannot honour: refused with what to do instead (absent, null or false pass). */
export const refused = (message: string) =>
  z
    .unknown()
    .superRefine((v, ctx) => {
      if (v !== undefined && v !== null && v !== false) ctx.addIssue({ code: 'custom', message });
    })
    .optional();

/** Choices one request may ask for (`n`): each is a lane call. */
export const MAX_CHOICES = 8;

/** OpenAI sampling parameters we pass through to the lane. */
export const Sampling = {
  temperature: nullable(z.number().min(0).max(2)),
  top_p: nullable(z.number().min(0).max(1)),
  max_tokens: nullable(z.number().int().min(1).max(65_536)),
  max_completion_tokens: nullable(z.number().int().min(1).max(65_536)),
  stop: nullable(z.union([z.string().max(200), z.array(z.string().max(200)).max(4)])),
  presence_penalty: nullable(z.number().min(-2).max(2)),
  frequency_penalty: nullable(z.number().min(-2).max(2)),
  seed: nullable(z.number().int()),
  n: nullable(z.number().int().min(1).max(MAX_CHOICES)).describe(
    `Choices (1 to ${MAX_CHOICES}): each is its own call to the lane, made side by side; usage is their sum.`,
  ),
  user: z.string().max(256).optional(),
  stream: nullable(z.boolean()).describe('true: server-sent events in the OpenAI chunk format.'),
  store: nullable(z.boolean()).describe(
    'true: the completion is kept 30 days (GET /v1/chat/completions and /{id}, its messages; update its metadata; delete it).',
  ),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  response_format: ResponseFormat.optional(),
  reasoning_effort: nullable(z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])).describe(
    "For reasoning models: passed to the lane (a model that does not reason may refuse it: 502, the provider's answer).",
  ),
  verbosity: nullable(z.enum(['low', 'medium', 'high'])).describe('Passed to the lane, as reasoning_effort.'),
  logit_bias: nullable(
    z
      .record(z.string().regex(/^\d{1,10}$/, 'a token id'), z.number().int().min(-100).max(100))
      .refine((m) => Object.keys(m).length <= 300, 'at most 300 tokens'),
  ).describe("Token id → bias (-100 to 100), passed to the lane; token ids are the lane's model's."),
  logprobs: nullable(z.boolean()).describe(
    "true: the lane's log probabilities of the answer's tokens, as it gives them.",
  ),
  top_logprobs: nullable(z.number().int().min(0).max(20)).describe(
    'With logprobs: the most likely alternatives a token.',
  ),
  functions: noClientTools('functions', FUNCTIONS_DEPRECATED),
  function_call: refused('send tool_choice instead (OpenAI deprecated function_call), or none'),
  modalities: nullable(
    z
      .array(z.enum(['text', 'audio']))
      .max(2)
      .refine((m) => !m.includes('audio'), 'audio output is not produced here: send ["text"] or leave modalities out'),
  ),
  audio: refused('audio output is not produced here: leave audio out (the answer is text)'),
  moderation: refused(
    'moderated completions are not run here: check the input and the answer with POST /v1/moderations, or leave moderation out',
  ),
  // Hints about the provider's own service, accepted and not acted on (the lanes decide tiers and caching).
  service_tier: nullable(z.enum(['auto', 'default', 'flex', 'scale', 'priority'])),
  prompt_cache_key: nullable(z.string().max(1024)),
  prompt_cache_retention: nullable(z.string().max(20)),
  safety_identifier: nullable(z.string().max(256)),
  prediction: nullable(
    z.object({
      type: z.literal('content'),
      content: z.union([
        z.string().max(MAX_MESSAGE_CHARS),
        z.array(z.object({ type: z.literal('text'), text: z.string() })),
      ]),
    }),
  ).describe('Accepted and not used: the lanes answer without predicted outputs (the answer is the same).'),
  metadata: nullable(Metadata).describe('Up to 16 string pairs kept with a stored completion; list filters by them.'),
};

/**
 * OpenAI's rule for tool_choice (a mode, or `{ name }` of the tool it forces): anything but "none" needs tools, and
 * a named tool must be one of them.
 */
export function checkToolChoice(
  ctx: z.RefinementCtx,
  choice: string | { name: string } | undefined,
  tools: string[] | undefined,
): void {
  if (choice === undefined || choice === 'none') return;
  const named = typeof choice === 'object' ? choice.name : undefined;
  if (tools?.length && (named === undefined || tools.includes(named))) return;
  ctx.addIssue({
    code: 'custom',
    path: ['tool_choice'],
    message: named !== undefined && tools?.length ? `no tool named ${named} in tools` : 'tool_choice needs tools',
  });
}

/** OpenAI's rule: top_logprobs only with logprobs. */
function checkLogprobs(b: { logprobs?: boolean; top_logprobs?: number }, ctx: z.RefinementCtx): void {
  if (b.top_logprobs !== undefined && b.logprobs !== true)
    ctx.addIssue({ code: 'custom', path: ['top_logprobs'], message: 'top_logprobs needs logprobs: true' });
}
export const SAMPLING_KEYS = [
  'temperature',
  'top_p',
  'stop',
  'presence_penalty',
  'frequency_penalty',
  'seed',
  'user',
  'response_format',
  'reasoning_effort',
  'verbosity',
  'logit_bias',
  'logprobs',
  'top_logprobs',
] as const;

/** OpenAI's web search for chat: results for the last user message put before the lane, cited as markdown links. */
export const WebSearchOptions = z
  .object({
    search_context_size: nullable(z.enum(['low', 'medium', 'high'])).describe(
      'Results given to the lane: low 3, medium 5 (default), high 10.',
    ),
    user_location: z
      .object({
        type: z.literal('approximate'),
        approximate: z
          .object({
            city: z.string().max(100).nullish(),
            country: z.string().max(2).nullish(),
            region: z.string().max(100).nullish(),
            timezone: z.string().max(100).nullish(),
          })
          .strict(),
      })
      .nullish()
      .describe('Accepted; the configured engines are not told a location.'),
  })
  .strict()
  .meta({ id: 'WebSearchOptions' });

/** The persona's own request fields (on chat completions and responses alike). */
export const PersonaFields = {
  // Spec: an invalid profile (too long, not a string) is ignored, never a 400.
  profile: z
    .string()
    .max(64)
    .nullish()
    .catch(undefined)
    .describe('Working style; honoured only when it belongs to the surface; an invalid one is ignored.'),
  svc_skills: SvcSkills.optional(),
};

export const ChatCompletionRequest = z
  .object({
    model: z.string().min(1).max(100).optional().describe('Lane id; default svc-oracle.'),
    messages: z.array(PersonaChatMessage).min(1).max(500),
    ...PersonaFields,
    ...Sampling,
    tools: z
      .array(ClientTool)
      .max(128)
      .refine((t) => new Set(t.map((x) => x.function.name)).size === t.length, 'tool names must be unique')
      .optional()
      .describe("Client tools, passed to the lane; the model's calls come back as `tool_calls` for the client to run."),
    tool_choice: nullable(ToolChoice),
    parallel_tool_calls: nullable(z.boolean()),
    web_search_options: nullable(WebSearchOptions).describe(
      'Search the web (the configured engines) for the last user message first; the answer cites what it uses as markdown links, listed in message.annotations.',
    ),
  })
  .superRefine((b, ctx) => {
    checkLogprobs(b, ctx);
    const images = b.messages.reduce(
      (n, m) => n + (Array.isArray(m.content) ? m.content.filter((p) => p.type === 'image_url').length : 0),
      0,
    );
    if (images > MAX_IMAGES)
      ctx.addIssue({ code: 'custom', path: ['messages'], message: `at most ${MAX_IMAGES} images in a request` });
    const files = b.messages.reduce(
      (n, m) => n + (Array.isArray(m.content) ? m.content.filter((p) => p.type === 'file').length : 0),
      0,
    );
    if (files > MAX_FILES)
      ctx.addIssue({ code: 'custom', path: ['messages'], message: `at most ${MAX_FILES} files in a request` });
    checkToolChoice(
      ctx,
      typeof b.tool_choice === 'object' ? b.tool_choice.function : b.tool_choice,
      b.tools?.map((t) => t.function.name),
    );
  })
  .meta({ id: 'ChatCompletionRequest' });
export type ChatCompletionRequest = z.output<typeof ChatCompletionRequest>;

/** Utility lanes: plain chat pass-through (no persona, memory, tools or surface behaviour). */
export const UtilityChatRequest = z
  .object({
    model: z.string().min(1).max(100).optional().describe('Lane id; each utility route accepts its own lanes.'),
    messages: z.array(ChatMessage).min(1).max(500),
    ...Sampling,
    tools: noClientTools('tools', TOOLS_ELSEWHERE),
    web_search_options: refused(
      'the utility lanes do not search: send web_search_options to POST /v1/chat/completions, or search with POST /v1/capabilities/web-search',
    ),
  })
  .superRefine(checkLogprobs)
  .meta({ id: 'UtilityChatRequest' });
export type UtilityChatRequest = z.output<typeof UtilityChatRequest>;

export const Usage = z
  .object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() })
  .meta({ id: 'Usage' });

export const ChatMeta = z
  .object({
    provider: z.string().describe('Public name of the provider that answered.'),
    sass_factor: z.number().min(0).max(1),
    surface: z.string().nullable().optional(),
    profile: z.string().nullable().optional(),
    skills: z.array(z.string()).optional(),
    session_id: z.string().nullable().optional(),
    tool_calls: z
      .array(z.object({ name: z.string(), ok: z.boolean() }))
      .optional()
      .describe('Commons lane: the tools that ran.'),
    web_search: z
      .object({ query: z.string(), results: z.array(z.object({ title: z.string(), url: z.string() })) })
      .optional()
      .describe('With web_search_options: what was searched and the results the lane got.'),
  })
  .meta({ id: 'ChatMeta' });

export const ChatCompletionResponse = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.number().int(),
    model: z.string().describe('The public lane id.'),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({
          role: z.literal('assistant'),
          content: z.string().nullable().describe('Null when the model answered with tool calls only.'),
          refusal: z.null(),
          annotations: z
            .array(
              z.object({
                type: z.literal('url_citation'),
                url_citation: z.object({
                  start_index: z.number().int(),
                  end_index: z.number().int(),
                  url: z.string(),
                  title: z.string(),
                }),
              }),
            )
            .optional()
            .describe('With web_search_options: the results the answer cites, where it cites them.'),
          tool_calls: z.array(ToolCall).optional().describe('The calls the model asks the client to run.'),
        }),
        logprobs: z
          .object({ content: z.array(z.unknown()).nullable(), refusal: z.array(z.unknown()).nullable().optional() })
          .nullable()
          .describe("The lane's log probabilities when logprobs was true and its model gives them; else null."),
        finish_reason: z.string(),
      }),
    ),
    usage: Usage,
    meta: ChatMeta,
  })
  .meta({ id: 'ChatCompletionResponse' });

export const ChatFeedbackBody = z
  .object({
    prompt: z.string().min(1).max(20_000),
    response: z.string().min(1).max(50_000),
    sass: z.number().min(0).max(1).optional().describe('Desired sass factor, 0.0 to 1.0.'),
    roast: z.string().max(5000).optional().describe('Critique of the response.'),
    lesson: z.string().max(2000).optional().describe('What should be learned.'),
    profile: z
      .string()
      .max(64)
      .optional()
      .catch(undefined)
      .describe('Profile the response was given under (optional; an invalid one is ignored).'),
    session_id: z.string().max(128).optional(),
  })
  .meta({ id: 'ChatFeedback' });

export const FeedbackResponse = z
  .object({
    ok: z.literal(true),
    id: z.string(),
    surface: z.string().nullable(),
    sass_factor: z.number().describe('The adjusted sass factor for this surface.'),
  })
  .meta({ id: 'FeedbackResponse' });

/** X-Session-ID: a client-chosen id, e.g. a UUID. */
export const SESSION_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** A session id as X-Session-ID and the WebSocket's subscribe message take it. */
export const SessionId = z.string().regex(SESSION_ID, '1-128 letters, digits, ".", "_", ":" or "-" (a UUID works)');

export const SessionSummary = z
  .object({
    id: z.string().describe('The client session id (X-Session-ID).'),
    surface: z.string().nullable(),
    title: z.string().nullable(),
    message_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'SessionSummary' });

export const SessionDetail = SessionSummary.extend({
  messages: z.array(z.object({ role: z.enum(['user', 'assistant']), content: z.string(), created_at: z.string() })),
}).meta({ id: 'SessionDetail' });

export const SessionListQuery = z.object({
  surface: z.string().max(20).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).max(100_000).default(0),
});

export const SessionList = z
  .object({ object: z.literal('list'), data: z.array(SessionSummary) })
  .meta({ id: 'SessionList' });

export const ModelObject = z
  .object({
    id: z.string(),
    object: z.literal('model'),
    created: z.number().int(),
    owned_by: z.string(),
    available: z.boolean(),
  })
  .meta({ id: 'Model' });
export const ModelList = z.object({ object: z.literal('list'), data: z.array(ModelObject) }).meta({ id: 'ModelList' });

export const ModulesResponse = z
  .object({
    skills: z.array(
      z.object({ id: z.string(), title: z.string(), description: z.string(), surfaces: z.array(z.string()) }),
    ),
    modules: z.array(
      z.object({ id: z.string(), title: z.string(), description: z.string(), surfaces: z.array(z.string()) }),
    ),
    surfaces: z.array(z.object({ id: z.string(), title: z.string(), profiles: z.array(z.string()) })),
  })
  .meta({ id: 'Modules' });

export const CommonsToolList = z
  .object({
    object: z.literal('list'),
    max_tool_calls: z.number().int(),
    data: z.array(
      z.object({ name: z.string(), description: z.string(), parameters: z.record(z.string(), z.unknown()) }),
    ),
  })
  .meta({ id: 'CommonsToolList' });
