import { z } from 'zod';
import {
  checkToolChoice,
  clientJsonSchema,
  FileData,
  FileRef,
  ImageUrl,
  MAX_FILES,
  MAX_IMAGES,
  MAX_MESSAGE_CHARS,
  Metadata,
  nullable,
  refused,
  openaiName,
  PersonaFields,
} from './chat';
import { readableText } from './storable';
import { cursorListOf } from './common';
import { Filter, RankingOptions, VectorStoreId } from './vector-stores';
import { Domain } from './web';
import {
  ApplyPatchTool,
  ComputerTool,
  ComputerUsePreviewTool,
  isClientBuiltin,
  LocalShellTool,
  SHELL_ITEMS,
  ShellTool,
} from './responses-shell';
import { ImageGenerationCallItem, ImageGenerationTool } from './responses-image-gen';

/**
 * OpenAI's Responses API (`POST /v1/responses`) as far as a persona lane can answer it: messages, images, function
 * tools and their results, instructions, structured output, stored responses chained by `previous_response_id`.
 * Files (inline, by URL, or uploaded to /v1/files) become their text; conversations (/v1/conversations) and background
 * runs are served here. What needs OpenAI's own machinery (built-in tools, prompt templates) is refused by name, never
 * dropped. Field names and limits follow OpenAI's published contract.
 */

/** A response's id (`resp_` and 24 characters of ours; any client-held id of this shape is looked up). */
export const RESPONSE_ID = /^resp_[A-Za-z0-9]{1,100}$/;
export const ResponseId = z.string().regex(RESPONSE_ID, 'a response id (resp_...)');
/** A conversation's id (`conv_`, POST /v1/conversations). */
export const ConversationId = z.string().regex(/^conv_[A-Za-z0-9]{1,100}$/, 'a conversation id (conv_...)');
/** Input items one request may carry (a coding agent resends its whole history: messages, calls and outputs). */
export const MAX_INPUT_ITEMS = 2000;

const ItemId = z.string().min(1).max(200);
const ItemStatus = z.enum(['in_progress', 'completed', 'incomplete']).nullish();

const InputText = z.object({ type: z.literal('input_text'), text: z.string().max(MAX_MESSAGE_CHARS) });
const OutputText = z.object({
  type: z.literal('output_text'),
  text: z.string().max(MAX_MESSAGE_CHARS),
  annotations: z.array(z.unknown()).max(1000).optional(),
  logprobs: z.array(z.unknown()).optional(),
});
const Refusal = z.object({ type: z.literal('refusal'), refusal: z.string().max(MAX_MESSAGE_CHARS) });
const InputImage = z
  .object({
    type: z.literal('input_image'),
    image_url: ImageUrl.nullish(),
    file_id: FileRef.nullish(),
    detail: z.enum(['auto', 'low', 'high']).nullish(),
  })
  .superRefine((p, ctx) => {
    if ((p.file_id == null) === (p.image_url == null))
      ctx.addIssue({ code: 'custom', path: ['image_url'], message: 'send one of image_url and file_id' });
  });
/** A document: its text is read by the document parsers (or, for a URL, fetched like a page) and given in its place. */
const InputFile = z
  .object({
    type: z.literal('input_file'),
    file_data: FileData.nullish(),
    file_url: z
      .url({ protocol: /^https?$/ })
      .max(4000)
      .nullish(),
    filename: z.string().max(255).nullish(),
    file_id: FileRef.nullish(),
  })
  .superRefine((p, ctx) => {
    if ([p.file_data, p.file_url, p.file_id].filter((v) => v != null).length !== 1)
      ctx.addIssue({ code: 'custom', message: 'send one of file_data, file_url and file_id' });
  });

const ContentPart = z.discriminatedUnion('type', [InputText, OutputText, Refusal, InputImage, InputFile]);
export type ResponseContentPart = z.output<typeof ContentPart>;

const MessageItem = z
  .object({
    type: z.literal('message'),
    id: ItemId.nullish(),
    status: ItemStatus,
    role: z.enum(['user', 'assistant', 'system', 'developer']),
    content: z.union([z.string().max(MAX_MESSAGE_CHARS), z.array(ContentPart).max(100)]),
  })
  .superRefine((m, ctx) => {
    if (typeof m.content === 'string') return;
    m.content.forEach((p, j) => {
      if ((p.type === 'input_image' || p.type === 'input_file') && m.role !== 'user')
        ctx.addIssue({
          code: 'custom',
          path: ['content', j],
          message: 'only a user message may carry images and files',
        });
      if ((p.type === 'output_text' || p.type === 'refusal') && m.role !== 'assistant')
        ctx.addIssue({ code: 'custom', path: ['content', j], message: `only an assistant message carries ${p.type}` });
    });
  });

const FunctionCallItem = z.object({
  type: z.literal('function_call'),
  id: ItemId.nullish(),
  status: ItemStatus,
  call_id: z.string().min(1).max(200),
  name: openaiName,
  arguments: z.string().max(MAX_MESSAGE_CHARS),
});

/** What a client's tool printed: text, or text parts (joined); images and files refused there. */
const ToolOutput = z
  .union([
    z.string().max(MAX_MESSAGE_CHARS),
    z
      .array(
        z.discriminatedUnion('type', [
          InputText,
          z
            .object({ type: z.literal('input_image') })
            .superRefine((_p, ctx) =>
              ctx.addIssue({ code: 'custom', message: 'images in a tool output are not supported here' }),
            ),
          z
            .object({ type: z.literal('input_file') })
            .superRefine((_p, ctx) =>
              ctx.addIssue({ code: 'custom', message: 'files in a tool output are not supported here' }),
            ),
        ]),
      )
      .max(100)
      .transform((parts) => parts.map((p) => (p as { text?: string }).text ?? '').join('\n')),
  ])
  // A tool's output is text another program wrote (a binary file read by a client's tool holds NULs): made
  // readable as pages and documents are (NUL dropped, a lone surrogate as U+FFFD), not refused.
  .transform(readableText);

const FunctionCallOutputItem = z.object({
  type: z.literal('function_call_output'),
  id: ItemId.nullish(),
  status: ItemStatus,
  call_id: z.string().min(1).max(200),
  output: ToolOutput,
});

/** A call of a custom (freeform) tool, as a client echoes it back. */
const CustomToolCallItem = z.object({
  type: z.literal('custom_tool_call'),
  id: ItemId.nullish(),
  status: ItemStatus,
  call_id: z.string().min(1).max(200),
  name: openaiName,
  input: z.string().max(MAX_MESSAGE_CHARS),
});

const CustomToolCallOutputItem = z.object({
  type: z.literal('custom_tool_call_output'),
  id: ItemId.nullish(),
  status: ItemStatus,
  call_id: z.string().min(1).max(200),
  output: ToolOutput,
});

/** Characters of a compaction item's sealed summary (OpenAI's limit is 20 MiB; ours hold one summary). */
export const MAX_COMPACTION_CHARS = 4_000_000;

/** A compaction item from POST /v1/responses/compact, sent back as input: its sealed summary stands for what it replaced. */
const CompactionItem = z.object({
  type: z.literal('compaction'),
  id: ItemId.nullish(),
  encrypted_content: z.string().min(1).max(MAX_COMPACTION_CHARS),
  created_by: z.string().max(200).nullish(),
});

/** A reasoning item a client echoes back (its encrypted content is the upstream's): taken and left out. */
const ReasoningItem = z.object({ type: z.literal('reasoning') }).loose();
/** A file or web search a client echoes back: taken and left out (the answer that used it carries what it found). */
const FileSearchCallItem = z.object({ type: z.literal('file_search_call') }).loose();
const WebSearchCallItem = z.object({ type: z.literal('web_search_call') }).loose();

/** A remote MCP server's label (`server_label`): it names the server in items and events. */
const ServerLabel = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, '1 to 64 of a-z, A-Z, 0-9, underscore and dash');
/** A tool's name on an MCP server (MCP allows more than OpenAI's function names: dots, slashes). */
const McpToolName = z.string().min(1).max(128);
/** A tool of a remote MCP server, as an earlier response's mcp_list_tools item listed it. */
const McpListedTool = z.object({
  name: McpToolName,
  description: z.string().max(MAX_MESSAGE_CHARS).nullish(),
  input_schema: z.record(z.string(), z.unknown()),
  annotations: z.record(z.string(), z.unknown()).nullish(),
});
/** The tools of a remote MCP server as an earlier response listed them: sent back, the server is not listed again. */
const McpListToolsItem = z.object({
  type: z.literal('mcp_list_tools'),
  id: ItemId.nullish(),
  server_label: ServerLabel,
  tools: z.array(McpListedTool).max(1000),
  error: z.string().max(MAX_MESSAGE_CHARS).nullish(),
});
/** A call of a remote MCP server's tool that an earlier response made, with what it answered. */
const McpCallItem = z.object({
  type: z.literal('mcp_call'),
  id: ItemId.nullish(),
  server_label: ServerLabel,
  name: McpToolName,
  arguments: z.string().max(MAX_MESSAGE_CHARS),
  output: z
    .string()
    .max(MAX_MESSAGE_CHARS)
    .nullish()
    .transform((v) => (v == null ? v : readableText(v))),
  error: z.union([z.string().max(MAX_MESSAGE_CHARS), z.record(z.string(), z.unknown())]).nullish(),
  status: z.enum(['in_progress', 'completed', 'incomplete', 'calling', 'failed']).nullish(),
  approval_request_id: ItemId.nullish(),
});
/** A call an earlier response asked the client to approve (require_approval). */
const McpApprovalRequestItem = z.object({
  type: z.literal('mcp_approval_request'),
  id: ItemId,
  server_label: ServerLabel,
  name: McpToolName,
  arguments: z.string().max(MAX_MESSAGE_CHARS),
});
/** The client's answer to an approval request: the call runs (approve: true) or the model hears it was declined. */
const McpApprovalResponseItem = z.object({
  type: z.literal('mcp_approval_response'),
  id: ItemId.nullish(),
  approval_request_id: ItemId,
  approve: z.boolean(),
  reason: z.string().max(4000).nullish(),
});

const unsupportedItem = <T extends string>(type: T, message: string) =>
  z
    .object({ type: z.literal(type) })
    .superRefine((_i, ctx) => ctx.addIssue({ code: 'custom', path: ['type'], message }));

export const InputItem = z.preprocess(
  // OpenAI's "easy" message has no type: a role makes it a message.
  (v) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) && !('type' in v) && 'role' in v
      ? { ...v, type: 'message' }
      : v,
  z.discriminatedUnion('type', [
    MessageItem,
    FunctionCallItem,
    FunctionCallOutputItem,
    CustomToolCallItem,
    CustomToolCallOutputItem,
    CompactionItem,
    ReasoningItem,
    FileSearchCallItem,
    WebSearchCallItem,
    McpListToolsItem,
    McpCallItem,
    McpApprovalRequestItem,
    McpApprovalResponseItem,
    ImageGenerationCallItem,
    ...SHELL_ITEMS,
    unsupportedItem(
      'item_reference',
      'item references are not supported here: send the item itself, or previous_response_id',
    ),
  ]),
);
export type ResponseInputItem = z.output<typeof InputItem>;

/** A function tool as the Responses API declares it (flat: name and parameters beside type). */
const FunctionTool = z
  .object({
    type: z.literal('function'),
    name: openaiName,
    description: z.string().max(4000).nullish(),
    parameters: clientJsonSchema.nullish(),
    strict: z.boolean().nullish(),
  })
  .strict();
/**
 * A custom (freeform) tool: the model writes its input as text, optionally in a grammar. Given to the lane as a
 * function with one string parameter `input` (the grammar in its description), its calls come back as
 * custom_tool_call items.
 */
const CustomTool = z
  .object({
    type: z.literal('custom'),
    name: openaiName,
    description: z.string().max(4000).nullish(),
    format: z
      .discriminatedUnion('type', [
        z.object({ type: z.literal('text') }).strict(),
        z
          .object({
            type: z.literal('grammar'),
            syntax: z.enum(['lark', 'regex']),
            definition: z.string().min(1).max(65_536),
          })
          .strict(),
      ])
      .nullish(),
    defer_loading: z.boolean().nullish(),
  })
  .strict();
export type CustomTool = z.output<typeof CustomTool>;

/** OpenAI's file_search tool over the tenant's vector stores (/v1/vector_stores), searched before the lane answers. */
export const FileSearchTool = z
  .object({
    type: z.literal('file_search'),
    vector_store_ids: z.array(VectorStoreId).min(1).max(10),
    max_num_results: z.number().int().min(1).max(50).nullish(),
    ranking_options: RankingOptions.nullish(),
    filters: Filter.nullish(),
  })
  .strict();
export type FileSearchTool = z.output<typeof FileSearchTool>;

/** OpenAI's web search tool, run here over the configured search engines before the lane answers (chat's web search). */
export const WebSearchTool = z
  .object({
    type: z.enum(['web_search', 'web_search_2025_08_26', 'web_search_preview', 'web_search_preview_2025_03_11']),
    filters: z
      .object({ allowed_domains: z.array(Domain).max(20).nullish() })
      .strict()
      .nullish(),
    search_context_size: z.enum(['low', 'medium', 'high']).nullish(),
    user_location: z
      .object({ type: z.literal('approximate') })
      .loose()
      .nullish(),
    search_content_types: z.array(z.string().max(20)).max(10).nullish(),
    external_web_access: z
      .boolean()
      .nullish()
      .refine((v) => v !== false, 'this service searches live only: leave external_web_access out or true'),
  })
  .strict();
export type WebSearchTool = z.output<typeof WebSearchTool>;

const WEB_SEARCH_TYPES: ReadonlySet<string> = new Set(WebSearchTool.shape.type.options);

/** Which tools of a server a filter picks: by name, or those the server marks read-only (`readOnlyHint`). */
const McpToolFilter = z
  .object({ tool_names: z.array(McpToolName).max(1000).nullish(), read_only: z.boolean().nullish() })
  .strict();
export type McpToolFilter = z.output<typeof McpToolFilter>;

/** What an HTTP header value may hold (Node and fetch refuse other characters). */
const HEADER_VALUE = /^[\t\x20-\x7E\x80-\xFF]*$/;

/** Headers the MCP exchange sets itself (framing, the connection, the protocol's own): refused in a tool's `headers`. */
const MCP_OWN_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'accept',
  'accept-encoding',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
]);

/**
 * OpenAI's remote MCP tool: the server's tools (those `allowed_tools` lets through) are offered to the lane; a call
 * the model makes runs on the server (after the client approves it, unless `require_approval` says never) and the model
 * answers with its result. The server is reached through the fetch guard (SVC_FETCH_ALLOW_PRIVATE).
 */
export const McpTool = z
  .object({
    type: z.literal('mcp'),
    server_label: ServerLabel,
    server_url: z
      .url({ protocol: /^https?$/ })
      .max(4000)
      .nullish(),
    connector_id: z.string().max(100).nullish(),
    tunnel_id: z.string().max(100).nullish(),
    authorization: z
      .string()
      .min(1)
      .max(8192)
      .regex(HEADER_VALUE, 'a token: printable ASCII and Latin-1, no line breaks')
      .nullish(),
    server_description: z.string().max(4000).nullish(),
    headers: z
      .record(
        z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,256}$/, 'an HTTP header name'),
        z
          .string()
          .max(8192)
          .regex(HEADER_VALUE, 'an HTTP header value: tab, printable ASCII and Latin-1, no line breaks'),
      )
      .refine((h) => Object.keys(h).length <= 32, 'at most 32 headers')
      .superRefine((h, ctx) => {
        for (const name of Object.keys(h))
          if (MCP_OWN_HEADERS.has(name.toLowerCase()))
            ctx.addIssue({
              code: 'custom',
              path: [name],
              message: `the ${name} header is set by the MCP exchange itself and cannot be given`,
            });
      })
      .nullish(),
    allowed_tools: z.union([z.array(McpToolName).max(1000), McpToolFilter]).nullish(),
    require_approval: z
      .union([
        z.enum(['always', 'never']),
        z.object({ always: McpToolFilter.nullish(), never: McpToolFilter.nullish() }).strict(),
      ])
      .nullish(),
    defer_loading: z.boolean().nullish(),
    allowed_callers: z
      .array(z.enum(['direct', 'programmatic']))
      .min(1)
      .max(2)
      .nullish(),
  })
  .strict()
  .superRefine((t, ctx) => {
    if (t.connector_id != null || t.tunnel_id != null)
      ctx.addIssue({
        code: 'custom',
        path: [t.connector_id != null ? 'connector_id' : 'tunnel_id'],
        message: "OpenAI's connectors and tunnels are not available here: give the MCP server's server_url",
      });
    else if (t.server_url == null)
      ctx.addIssue({ code: 'custom', path: ['server_url'], message: 'server_url is required' });
  });
export type McpTool = z.output<typeof McpTool>;

/** Other built-in tools (code_interpreter, ...) run on OpenAI's side: refused by name. */
const Tool = z
  .object({ type: z.string().max(100) })
  .loose()
  .superRefine((t, ctx) => {
    if (
      t.type !== 'function' &&
      t.type !== 'custom' &&
      t.type !== 'file_search' &&
      t.type !== 'mcp' &&
      t.type !== 'image_generation' &&
      !isClientBuiltin(t.type) &&
      !WEB_SEARCH_TYPES.has(t.type)
    )
      ctx.addIssue({
        code: 'custom',
        path: ['type'],
        message: `the built-in tool '${t.type}' is not available here: send function or custom tools, shell, apply_patch, local_shell or computer (the client runs them), file_search, web_search, mcp (a remote MCP server) or image_generation; POST /v1/capabilities/research and POST /v1/mcp offer this service's own tools`,
      });
  })
  .pipe(
    z.discriminatedUnion('type', [
      FunctionTool,
      CustomTool,
      FileSearchTool,
      WebSearchTool,
      McpTool,
      ShellTool,
      ApplyPatchTool,
      LocalShellTool,
      ComputerUsePreviewTool,
      ComputerTool,
      ImageGenerationTool,
    ]),
  );
type AnyTool = z.output<typeof Tool>;

/** A search this service runs itself before the lane (file_search, web_search): neither the client's nor an MCP server's. */
export const isBuiltin = <T extends { type: string }>(
  t: T,
): t is Extract<T, { type: 'file_search' | WebSearchTool['type'] }> =>
  t.type === 'file_search' || WEB_SEARCH_TYPES.has(t.type);

/**
 * The names the lane knows the client's tools by: a function's or custom tool's name, and shell, apply_patch and
 * local_shell for those built-in tools (each is offered as a function of its type's name).
 */
export const clientToolNames = (tools: readonly AnyTool[]): string[] =>
  tools.flatMap((t) =>
    t.type === 'function' || t.type === 'custom' ? [t.name] : isClientBuiltin(t.type) ? [t.type] : [],
  );

const ToolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.enum(['file_search', 'web_search', 'web_search_preview']) }).strict(),
  z.object({ type: z.enum(['function', 'custom']), name: openaiName }).strict(),
  z.object({ type: z.literal('mcp'), server_label: ServerLabel, name: McpToolName.nullish() }).strict(),
  z.object({ type: z.enum(['shell', 'apply_patch', 'computer', 'computer_use', 'computer_use_preview']) }).strict(),
  z.object({ type: z.literal('image_generation') }).strict(),
]);

/** The client-run built-in tool a `tool_choice` of a built-in type picks among the tools (any computer tool for a computer choice). */
export const chosenBuiltin = <T extends { type: string }>(tools: readonly T[] | undefined, type: string) =>
  tools?.find((t) =>
    type === 'shell' || type === 'apply_patch'
      ? t.type === type
      : t.type === 'computer' || t.type === 'computer_use_preview',
  );

const TextFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }).strict(),
  z.object({ type: z.literal('json_object') }).strict(),
  z
    .object({
      type: z.literal('json_schema'),
      name: openaiName,
      description: z.string().max(4000).nullish(),
      schema: clientJsonSchema,
      strict: z.boolean().nullish(),
    })
    .strict(),
]);

export { Metadata };

/** A response's input: text (a user message) or items. */
const ResponseInput = z
  .union([z.string().max(MAX_MESSAGE_CHARS), z.array(InputItem).min(1).max(MAX_INPUT_ITEMS)])
  .describe(
    'Text (a user message), or items: messages, function, custom, shell, apply_patch, local_shell and computer calls and their outputs, MCP items, compaction items from POST /v1/responses/compact.',
  );
const Instructions = nullable(z.string().max(MAX_MESSAGE_CHARS)).describe(
  'A system message for this response only (not carried to the next by previous_response_id).',
);
const PreviousResponseId = nullable(ResponseId).describe(
  'A stored response of this tenant: its input and output come before this input.',
);

export const CreateResponseRequest = z
  .object({
    model: z.string().min(1).max(100).optional().describe('Lane id; default svc-oracle.'),
    input: ResponseInput,
    instructions: Instructions,
    previous_response_id: PreviousResponseId,
    store: nullable(z.boolean()).describe('Keep the response 30 days (default true) for GET and previous_response_id.'),
    stream: nullable(z.boolean()).describe('true: server-sent events in the Responses format.'),
    stream_options: z.object({ include_obfuscation: z.boolean().nullish() }).nullish(),
    tools: z
      .array(Tool)
      .max(128)
      .refine((t) => {
        const named = clientToolNames(t);
        return new Set(named).size === named.length;
      }, 'tool names must be unique (a shell, apply_patch or local_shell tool is a function of that name to the model, and is given once)')
      .refine((t) => t.filter((x) => x.type === 'file_search').length <= 1, 'at most one file_search tool')
      .refine((t) => t.filter((x) => WEB_SEARCH_TYPES.has(x.type)).length <= 1, 'at most one web search tool')
      .refine((t) => {
        const labels = t.flatMap((x) => (x.type === 'mcp' ? [x.server_label.toLowerCase()] : []));
        return new Set(labels).size === labels.length;
      }, 'server_label must be unique among mcp tools')
      .refine((t) => t.filter((x) => x.type === 'mcp').length <= 8, 'at most 8 mcp tools')
      .refine(
        (t) => t.filter((x) => x.type === 'computer' || x.type === 'computer_use_preview').length <= 1,
        'at most one computer tool (computer or computer_use_preview)',
      )
      .refine((t) => t.filter((x) => x.type === 'image_generation').length <= 1, 'at most one image_generation tool')
      .optional()
      .describe(
        'Function tools ({type: "function", name, description, parameters, strict}), custom tools ({type: "custom", name, description, format: text or a lark/regex grammar}) and the shell ({type: "shell", environment: local}), apply_patch, local_shell, computer_use_preview and computer tools, which the client runs; file_search over your vector stores and web_search over the configured engines (each searched for the last user message before the answer); mcp (a remote MCP server\'s tools, called by the service) and image_generation (images made or edited with the images lane); other built-in tools are refused by name.',
      ),
    tool_choice: nullable(ToolChoice),
    parallel_tool_calls: nullable(z.boolean()),
    max_tool_calls: nullable(z.number().int().min(1)).describe(
      'Limits built-in tool calls (file_search is called at most once a response here).',
    ),
    temperature: nullable(z.number().min(0).max(2)),
    top_p: nullable(z.number().min(0).max(1)),
    max_output_tokens: nullable(z.number().int().min(16).max(65_536)),
    text: z.object({ format: TextFormat.nullish(), verbosity: nullable(z.enum(['low', 'medium', 'high'])) }).nullish(),
    reasoning: z
      .object({
        effort: nullable(z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])),
        summary: nullable(z.enum(['auto', 'concise', 'detailed'])),
        generate_summary: nullable(z.enum(['auto', 'concise', 'detailed'])),
      })
      .nullish(),
    metadata: nullable(Metadata),
    user: nullable(z.string().max(256)),
    safety_identifier: nullable(z.string().max(256)),
    prompt_cache_key: nullable(z.string().max(1024)),
    prompt_cache_retention: nullable(z.string().max(20)),
    service_tier: nullable(z.enum(['auto', 'default', 'flex', 'scale', 'priority'])),
    truncation: nullable(z.enum(['auto', 'disabled'])),
    include: nullable(z.array(z.string().max(100)).max(20)),
    top_logprobs: nullable(z.number().int().min(0).max(20)),
    background: nullable(z.boolean()).describe(
      'true: answer at once with the response queued, run it as a durable workflow, poll GET /v1/responses/{id} or stream it with ?stream=true (resumable with starting_after); cancel with POST .../cancel. Needs store (the default).',
    ),
    conversation: nullable(z.union([ConversationId, z.object({ id: ConversationId })])).describe(
      "A conversation (POST /v1/conversations): its items come before this input, and this response's input and output are added to it.",
    ),
    prompt: refused('prompt templates are not supported here: send instructions and input'),
    ...PersonaFields,
  })
  .superRefine((b, ctx) => {
    if (Array.isArray(b.input)) {
      let images = 0;
      let files = 0;
      for (const item of b.input)
        if (item.type === 'message' && Array.isArray(item.content)) {
          images += item.content.filter((p) => p.type === 'input_image').length;
          files += item.content.filter((p) => p.type === 'input_file').length;
        }
      if (images > MAX_IMAGES)
        ctx.addIssue({ code: 'custom', path: ['input'], message: `at most ${MAX_IMAGES} images in a request` });
      if (files > MAX_FILES)
        ctx.addIssue({ code: 'custom', path: ['input'], message: `at most ${MAX_FILES} files in a request` });
    }
    const builtins = b.tools?.filter(isBuiltin) ?? [];
    const named = b.tools && clientToolNames(b.tools);
    const choice = b.tool_choice;
    const mcp = b.tools?.filter((t) => t.type === 'mcp') ?? [];
    const imageTool = b.tools?.findIndex((t) => t.type === 'image_generation') ?? -1;
    if (typeof choice === 'object' && choice.type === 'image_generation') {
      if (imageTool < 0)
        ctx.addIssue({ code: 'custom', path: ['tool_choice'], message: 'no image_generation tool in tools' });
    } else if (typeof choice === 'object' && choice.type === 'mcp') {
      if (!mcp.some((t) => t.server_label === choice.server_label))
        ctx.addIssue({
          code: 'custom',
          path: ['tool_choice', 'server_label'],
          message: `no mcp tool with server_label '${choice.server_label}' in tools`,
        });
    } else if (
      typeof choice === 'object' &&
      isClientBuiltin(choice.type === 'computer_use' ? 'computer' : choice.type)
    ) {
      if (!chosenBuiltin(b.tools, choice.type))
        ctx.addIssue({ code: 'custom', path: ['tool_choice'], message: `no ${choice.type} tool in tools` });
    } else if (typeof choice === 'object' && choice.type !== 'function' && choice.type !== 'custom') {
      const kind = choice.type === 'file_search' ? 'file_search' : 'web_search';
      if (!builtins.some((t) => (kind === 'file_search' ? t.type === 'file_search' : WEB_SEARCH_TYPES.has(t.type))))
        ctx.addIssue({ code: 'custom', path: ['tool_choice'], message: `no ${kind} tool in tools` });
    } else if (!(typeof choice === 'string' && (builtins.length || mcp.length || imageTool >= 0)))
      checkToolChoice(ctx, choice, named);
    if (b.conversation !== undefined && b.previous_response_id !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['conversation'],
        message: 'send one of conversation and previous_response_id',
      });
    if (b.background && b.store === false)
      ctx.addIssue({
        code: 'custom',
        path: ['store'],
        message: 'a background response is stored (it is polled and streamed by its id): leave store out or true',
      });
  })
  .meta({ id: 'CreateResponseRequest' });
export type CreateResponseRequest = z.output<typeof CreateResponseRequest>;

/** The Response object (documented loosely: its items follow OpenAI's contract). */
export const ResponseObject = z
  .object({
    id: z.string(),
    object: z.literal('response'),
    created_at: z.number().int(),
    completed_at: z.number().int().nullable(),
    status: z.enum(['completed', 'incomplete', 'failed', 'in_progress', 'queued', 'cancelled']),
    background: z.boolean(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    incomplete_details: z.object({ reason: z.string() }).nullable(),
    instructions: z.string().nullable(),
    model: z.string(),
    output: z.array(z.record(z.string(), z.unknown())),
    previous_response_id: z.string().nullable(),
    store: z.boolean(),
    usage: z
      .object({ input_tokens: z.number().int(), output_tokens: z.number().int(), total_tokens: z.number().int() })
      .loose()
      .optional()
      .describe('Absent until the answer is whole.'),
    metadata: z.record(z.string(), z.string()),
    meta: z.record(z.string(), z.unknown()).describe('The persona block, as on chat completions.'),
  })
  .loose()
  .meta({ id: 'Response' });

export const DeletedResponse = z
  .object({ id: z.string(), object: z.literal('response'), deleted: z.literal(true) })
  .meta({ id: 'DeletedResponse' });

const QueryBool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** GET /v1/responses/{id}: as OpenAI's (stream and starting_after replay a background response's events). */
export const RetrieveResponseQuery = z.object({
  stream: QueryBool.optional(),
  starting_after: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  include: z.union([z.string().max(100), z.array(z.string().max(100)).max(20)]).optional(),
  include_obfuscation: QueryBool.optional(),
});

export const InputItemsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(['asc', 'desc']).default('desc'),
  after: ItemId.optional(),
  include: z.union([z.string().max(100), z.array(z.string().max(100)).max(20)]).optional(),
});

/** A cursor list of items (a response's input items, a conversation's items), documented under `id`. */
export const itemListOf = (id: string) => cursorListOf(z.record(z.string(), z.unknown()), id);

export const InputItemList = itemListOf('ResponseItemList');

/**
 * POST /v1/responses/compact: the conversation (its input, and the stored responses it continues) compacted into its
 * user messages and one compaction item. `model` is required, as OpenAI's.
 */
export const CompactRequest = z
  .object({
    model: z.string().min(1).max(100).describe('The lane that writes the summary.'),
    input: nullable(ResponseInput),
    instructions: Instructions,
    previous_response_id: PreviousResponseId,
    prompt_cache_key: nullable(z.string().max(64)).describe('Accepted; the lanes cache prompts themselves.'),
  })
  .superRefine((b, ctx) => {
    if (b.input === undefined && b.previous_response_id === undefined)
      ctx.addIssue({ code: 'custom', path: ['input'], message: 'input or previous_response_id is required' });
  })
  .meta({ id: 'CompactRequest' });
export type CompactRequest = z.output<typeof CompactRequest>;

export const CompactedResponse = z
  .object({
    id: z.string(),
    object: z.literal('response.compaction'),
    created_at: z.number().int(),
    output: z.array(z.record(z.string(), z.unknown())),
    usage: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'CompactedResponse' });

export const InputTokenCount = z
  .object({ object: z.literal('response.input_tokens'), input_tokens: z.number().int() })
  .meta({ id: 'InputTokenCount' });
