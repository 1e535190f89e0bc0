import { z } from 'zod';

/** Text content: a string, or OpenAI content parts of type text (joined). Other part types are refused. */
const Content = z
  .union([
    z.string().max(200_000),
    z
      .array(z.object({ type: z.literal('text'), text: z.string().max(200_000) }))
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
            name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, '1 to 64 of a-z, A-Z, 0-9, underscore and dash'),
            description: z.string().max(4000).optional(),
            schema: z
              .record(z.string(), z.unknown())
              .refine((v) => JSON.stringify(v).length <= 65_536, 'at most 64 KB of JSON')
              .optional(),
            strict: z.boolean().nullish(),
          })
          .strict(),
      })
      .strict(),
  ])
  .meta({ id: 'ResponseFormat' })
  .describe('text, json_object or json_schema, as in OpenAI; passed to the lane, whose model must support it.');

/**
 * Client tools (`tools`, and the older `functions`): these routes call none, so a list with any is refused rather
 * than dropped, which would leave a client's agent loop waiting for calls that never come. An empty list is fine.
 */
const noClientTools = (field: 'tools' | 'functions') =>
  z
    .array(z.unknown())
    .max(
      0,
      `this route does not call client ${field} (its lane answers in text); send none, or use ` +
        'POST /v1/slm/commons/completions (server-side tools), POST /v1/capabilities/agent or POST /v1/mcp',
    )
    .optional();

/** A field OpenAI's contract makes nullable: null is taken as absent (clients that serialise None send it). */
const nullable = <T extends z.ZodType>(t: T) => t.nullish().transform((v) => v ?? undefined);

/** OpenAI sampling parameters we pass through to the lane. */
const Sampling = {
  temperature: nullable(z.number().min(0).max(2)),
  top_p: nullable(z.number().min(0).max(1)),
  max_tokens: nullable(z.number().int().min(1).max(65_536)),
  max_completion_tokens: nullable(z.number().int().min(1).max(65_536)),
  stop: nullable(z.union([z.string().max(200), z.array(z.string().max(200)).max(4)])),
  presence_penalty: nullable(z.number().min(-2).max(2)),
  frequency_penalty: nullable(z.number().min(-2).max(2)),
  seed: nullable(z.number().int()),
  n: nullable(z.literal(1)).describe('Only one choice is supported.'),
  user: z.string().max(256).optional(),
  stream: nullable(z.boolean()).describe('true: server-sent events in the OpenAI chunk format.'),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  response_format: ResponseFormat.optional(),
  tools: noClientTools('tools'),
  functions: noClientTools('functions'),
};
export const SAMPLING_KEYS = [
  'temperature',
  'top_p',
  'stop',
  'presence_penalty',
  'frequency_penalty',
  'seed',
  'user',
  'response_format',
] as const;

export const ChatCompletionRequest = z
  .object({
    model: z.string().min(1).max(100).optional().describe('Lane id; default svc-oracle.'),
    messages: z.array(ChatMessage).min(1).max(500),
    // Spec: an invalid profile (too long, not a string) is ignored, never a 400.
    profile: z
      .string()
      .max(64)
      .nullish()
      .catch(undefined)
      .describe('Working style; honoured only when it belongs to the surface; an invalid one is ignored.'),
    svc_skills: SvcSkills.optional(),
    ...Sampling,
  })
  .meta({ id: 'ChatCompletionRequest' });
export type ChatCompletionRequest = z.output<typeof ChatCompletionRequest>;

/** Utility lanes: plain chat pass-through (no persona, memory, tools or surface behaviour). */
export const UtilityChatRequest = z
  .object({
    model: z.string().min(1).max(100).optional().describe('Lane id; each utility route accepts its own lanes.'),
    messages: z.array(ChatMessage).min(1).max(500),
    ...Sampling,
  })
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
        message: z.object({ role: z.literal('assistant'), content: z.string(), refusal: z.null() }),
        logprobs: z.null().describe('Always null: log probabilities are not offered.'),
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
