import type { ChatMessageIn, ModelRequest, ModelResult, ModelUsage } from '../../activities/providers/types';
import { lazyModule } from '../../activities/lazy-module';
import { AppError } from '../../schema/errors';
import { clientToolNames, type CreateResponseRequest, type McpTool, type McpToolFilter } from '../../schema/responses';
import type { DatabasePool } from 'slonik';
import { sealWith } from '../../activities/store/sealed';
import type { Config } from '../../schema/config';
import { IMAGE_GENERATION, type ImageGenerationTool } from '../../schema/responses-image-gen';
import { principalOf, type AppContext } from '../context';
import { tenantFiles } from './chat-parts';
import type { RemoteMcp, RemoteTool } from '../mcp/remote-client';
import { abortOnDisconnect, sumUsage, unlessClientGone } from './chat-shared';
import { ImageGeneration, imageNotMade, type LatestImage } from './responses-image-gen';
import { mcpLaneName } from './responses-mcp-names';
import {
  callItem,
  itemId,
  mcpCallMessages,
  serverCallMessages,
  outputItems,
  responseStatus,
  type AnswerLead,
  type ImageGenerationCall,
  type McpApprovalRequest,
  type McpCall,
  type McpListTools,
  type NormalizedInput,
  type OutputItem,
  type StoredItem,
} from './responses-items';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the SDK's client loads on the first mcp tool (see lazyModule)
const remote = lazyModule(() => require('../mcp/remote-client') as typeof import('../mcp/remote-client'));

/**
 * What a background response's (or a batch line's) worker needs to run its server-run tools again (see `fromJob`),
 * kept with its job.
 */
export interface ServerToolsJob {
  /** Calls it may still make (`max_tool_calls` less the approved calls made when it was queued). */
  budget: number;
  /** Its image_generation tool, and the image an edit would change when it was queued. */
  images?: { tool: ImageGenerationTool; latest?: LatestImage };
  /**
   * Its MCP servers (their tool entries, credentials included, and the tools they offer), sealed to the response: a
   * server's token and headers are never kept in the clear.
   */
  mcp?: string;
  /** The items made when it was queued (the servers' lists, the approved calls): its answer starts with them. */
  items: OutputItem[];
}

/** The seal of a response's MCP servers in its job (AES-256-GCM under the service's `mcp` key, bound to the response). */
const serversSeal = (db: DatabasePool, tenantId: string, responseId: string) =>
  sealWith(db, 'mcp', `mcp:${tenantId}:${responseId}`, 'mcps1.');

/** A call of a tool this service runs for the response (an MCP server's, image generation), as its item. */
export type ServerCall = McpCall | ImageGenerationCall;

type Emit = (type: string, data: Record<string, unknown>) => void;

/** Server-run tool calls one response may make when `max_tool_calls` does not say (and at most, when it does). */
const MCP_CALLS = 16;
const MCP_CALLS_MAX = 64;
/** The server-run calls a response may make: `max_tool_calls`, else MCP_CALLS; never more than MCP_CALLS_MAX. */
const callBudget = (body: CreateResponseRequest) => Math.min(body.max_tool_calls ?? MCP_CALLS, MCP_CALLS_MAX);
/** Functions one model request may declare (OpenAI's limit): the client's and the servers' together. */
const MAX_LANE_TOOLS = 128;

type ToolCall = NonNullable<ChatMessageIn['tool_calls']>[number];

/** A request's MCP server: its tool entry, where it is (`body.tools.N`), and the tools it offers the lane. */
interface Server {
  tool: McpTool;
  at: number;
  tools: RemoteTool[];
}

/** Whether a filter picks a tool: by name, and (read_only) by the server's readOnlyHint. An empty filter picks all. */
function picks(f: readonly string[] | McpToolFilter | null | undefined, t: RemoteTool): boolean {
  if (f == null) return true;
  if (Array.isArray(f)) return f.includes(t.name);
  const filter = f as McpToolFilter;
  if (filter.tool_names != null && !filter.tool_names.includes(t.name)) return false;
  if (filter.read_only === true && t.annotations?.readOnlyHint !== true) return false;
  return true;
}

/** What a call of `t` needs: the client's approval unless require_approval says never (OpenAI's default: always). */
function approvalNeeded(tool: McpTool, t: RemoteTool): boolean {
  const rule = tool.require_approval;
  if (rule == null || rule === 'always') return true;
  if (rule === 'never') return false;
  if (rule.never != null && picks(rule.never, t)) return false;
  return true;
}

/** A failure to reach or list a server, as the request's error naming its tool entry. */
function serverError(err: unknown, at: number): unknown {
  const R = remote();
  if (!(err instanceof R.RemoteMcpFailure)) return err;
  const path = `body.tools.${at}.server_url`;
  const details = [{ path, message: err.message }];
  if (err.kind === 'refused')
    return new AppError('invalid_request', `tools.${at}.server_url: ${err.message}`, { details });
  return new AppError(err.kind === 'timeout' ? 'upstream_timeout' : 'upstream_error', err.message, { details });
}

/**
 * The tools this service runs for a response: its remote MCP servers (OpenAI's `mcp` tools), their tools offered to
 * the lane as functions, calls made on the server (or turned into approval requests), one connection per server for
 * the response's length; and the image_generation tool (see ImageGeneration). Their calls share `max_tool_calls`.
 */
export class ServerTools {
  /** The lane's function name → its server and tool. */
  private readonly byLane = new Map<string, { server: Server; tool: RemoteTool }>();
  private readonly connections = new Map<string, Promise<RemoteMcp>>();
  /** Calls made so far (the budget is `max_tool_calls`). */
  private made = 0;
  /** Closed when the response ends: no connection is opened after that. */
  private closed = false;
  /** Removes what ties the session to its worker's signal (see fromJob). */
  private detach: (() => void) | undefined;
  /**
   * Run once, before the first call is made (a batch line marks itself, so a later attempt of its run does not make
   * the call again); a failure fails the call's round, and no call is made.
   */
  beforeFirstCall: (() => Promise<void>) | undefined;

  private constructor(
    private readonly servers: Map<string, Server>,
    private readonly config: { allowPrivate: AppContext['deps']['config']['allowPrivateFetch'] },
    /** Aborts when the client goes away. */
    private readonly abort: AbortController,
    /** The items of this response's lead: the lists made now, then the approved calls. */
    readonly items: OutputItem[],
    private readonly budget: number,
    /** The request's image_generation tool. */
    private readonly images: ImageGeneration | undefined,
  ) {}

  /**
   * The request's MCP servers with their tools: listed now, or as an mcp_list_tools item of the conversation lists
   * them (no second listing); and its image_generation tool, checked against the images lane. Undefined when the
   * request has neither.
   * @throws AppError 400 (a server the fetch guard refuses, two tools under one lane name), 502/504 (a server that
   *   fails), 503 (no images lane)
   */
  static async open(
    ctx: AppContext,
    body: CreateResponseRequest,
    items: readonly StoredItem[],
    /** A batch line's or a background response's: not ended by the client leaving (no listener on its request). */
    detached = false,
  ): Promise<ServerTools | undefined> {
    const entries = (body.tools ?? []).flatMap((t, at) => (t.type === 'mcp' ? [{ tool: t, at }] : []));
    const files = tenantFiles(ctx.deps.db, principalOf(ctx).tenantId);
    const images = await ImageGeneration.open(ctx.deps.config, body, items, files);
    if (!entries.length && !images) return undefined;
    const taken = new Set(clientToolNames(body.tools ?? []));
    if (images) {
      // Checked before any server is reached.
      const at = body.tools!.findIndex((t) => t.type === IMAGE_GENERATION);
      if (taken.has(IMAGE_GENERATION))
        throw new AppError(
          'invalid_request',
          `tools.${at}: the image_generation tool is offered to the model as a function of that name, which another tool already has; rename that tool.`,
          { details: [{ path: `body.tools.${at}`, message: `tool name '${IMAGE_GENERATION}' taken` }] },
        );
      taken.add(IMAGE_GENERATION);
    }
    const config = { allowPrivate: ctx.deps.config.allowPrivateFetch };
    const session = new ServerTools(
      new Map(),
      config,
      detached ? new AbortController() : abortOnDisconnect(ctx),
      [],
      callBudget(body),
      images,
    );
    try {
      // Listed side by side; the lists become items in the order of the request's tools.
      const lists = await Promise.all(
        entries.map(async ({ tool, at }) => {
          const listed = items.findLast(
            (i): i is McpListTools => i.type === 'mcp_list_tools' && i.server_label === tool.server_label && !i.error,
          );
          if (listed) return { tools: listed.tools, fresh: false };
          const tools = await unlessClientGone(session.abort, () =>
            session.connection(tool).then((c) => c.listTools()),
          ).catch((err: unknown) => {
            throw serverError(err, at);
          });
          return { tools, fresh: true };
        }),
      );
      entries.forEach(({ tool, at }, k) => {
        const { tools, fresh } = lists[k];
        if (fresh)
          session.items.push({
            type: 'mcp_list_tools',
            id: itemId('mcpl'),
            server_label: tool.server_label,
            tools,
            error: null,
          });
        session.servers.set(tool.server_label, { tool, at, tools: tools.filter((t) => picks(tool.allowed_tools, t)) });
      });
    } catch (err) {
      await session.close();
      throw err;
    }
    for (const { tool, at } of entries) {
      const server = session.servers.get(tool.server_label)!;
      for (const t of server.tools) {
        const name = mcpLaneName(tool.server_label, t.name);
        if (taken.has(name)) {
          await session.close();
          throw new AppError(
            'invalid_request',
            `tools.${at}: the MCP tool '${t.name}' would be offered as '${name}', a name another tool already has; rename that tool or this server_label.`,
            { details: [{ path: `body.tools.${at}.server_label`, message: `tool name '${name}' taken` }] },
          );
        }
        taken.add(name);
        session.byLane.set(name, { server, tool: t });
      }
    }
    if (entries.length && taken.size > MAX_LANE_TOOLS) {
      await session.close();
      const at = entries[0].at;
      throw new AppError(
        'invalid_request',
        `tools: the MCP servers offer ${session.byLane.size} tools, ${taken.size} with the others, over the ${MAX_LANE_TOOLS} a model takes; pick the ones this response needs with allowed_tools.`,
        { details: [{ path: `body.tools.${at}.allowed_tools`, message: `over ${MAX_LANE_TOOLS} tools` }] },
      );
    }
    return session;
  }

  /**
   * A background response's (or a batch line's) server-run tools as its worker runs them, from its job (`toJob`): the
   * servers as they were listed when it was queued (connected again on the first call), its image_generation tool.
   * @throws AppError service_unavailable when the sealed servers cannot be opened (the service key changed)
   */
  static async fromJob(
    deps: { db: DatabasePool; config: Config },
    where: { tenantId: string; responseId: string },
    job: ServerToolsJob,
    signal: AbortSignal,
  ): Promise<ServerTools> {
    const abort = new AbortController();
    const stop = () => abort.abort();
    if (signal.aborted) abort.abort();
    else signal.addEventListener('abort', stop, { once: true });
    const { config } = deps;
    const images = job.images ? new ImageGeneration(config, job.images.tool, job.images.latest) : undefined;
    const session = new ServerTools(
      new Map(),
      { allowPrivate: config.allowPrivateFetch },
      abort,
      [...job.items],
      job.budget,
      images,
    );
    session.detach = () => signal.removeEventListener('abort', stop);
    if (job.mcp) {
      const opened = (await serversSeal(deps.db, where.tenantId, where.responseId)).open(job.mcp);
      if (opened === null)
        throw new AppError(
          'service_unavailable',
          "This response's MCP servers could not be read back (the service key that sealed them changed); create the response again.",
        );
      for (const server of JSON.parse(opened) as Server[]) {
        session.servers.set(server.tool.server_label, server);
        for (const tool of server.tools)
          session.byLane.set(mcpLaneName(server.tool.server_label, tool.name), { server, tool });
      }
    }
    return session;
  }

  /** What a worker needs to run these tools again (see `fromJob`), the MCP servers sealed to the response. */
  async toJob(db: DatabasePool, tenantId: string, responseId: string): Promise<ServerToolsJob> {
    const images = this.images;
    return {
      budget: Math.max(0, this.budget - this.made),
      ...(images ? { images: { tool: images.tool, ...(images.latest ? { latest: images.latest } : {}) } } : {}),
      ...(this.servers.size
        ? { mcp: (await serversSeal(db, tenantId, responseId)).seal(JSON.stringify([...this.servers.values()])) }
        : {}),
      items: this.items,
    };
  }

  /** The servers' tools (and image generation) as the lane's functions (what the model may call while the budget lasts). */
  laneTools(): Array<{
    type: 'function';
    function: { name: string; description?: string; parameters: Record<string, unknown> };
  }> {
    const own = [...this.byLane].map(([name, { server, tool }]) => {
      const about = server.tool.server_description
        ? `${server.tool.server_label}: ${server.tool.server_description}`
        : server.tool.server_label;
      const description = [tool.description ?? '', `(A tool of the MCP server ${about}.)`].filter(Boolean).join('\n\n');
      const schema = tool.input_schema;
      return {
        type: 'function' as const,
        function: {
          name,
          description: description.slice(0, 8000),
          parameters: schema.type === 'object' ? schema : { type: 'object', properties: {} },
        },
      };
    });
    return this.images ? [...own, this.images.laneTool()] : own;
  }

  /**
   * The lane's tool choice for an mcp choice: the tool named, or any tool.
   * @throws AppError 400 when the server does not offer the tool named (or `allowed_tools` leaves it out)
   */
  choiceFor(choice: { server_label: string; name?: string | null }): unknown {
    if (choice.name == null) return 'required';
    const name = mcpLaneName(choice.server_label, choice.name);
    if (!this.has(name))
      throw new AppError(
        'invalid_request',
        `tool_choice: the MCP server '${choice.server_label}' offers no tool '${choice.name}' (or allowed_tools leaves it out).`,
        { details: [{ path: 'body.tool_choice.name', message: 'tool not offered' }] },
      );
    return { type: 'function', function: { name } };
  }

  /** True for a lane function that is a tool this service runs (an MCP server's tool, image generation). */
  has(laneName: string): boolean {
    return this.byLane.has(laneName) || (this.images !== undefined && laneName === IMAGE_GENERATION);
  }

  /** True while the response may make more calls. */
  get open(): boolean {
    return this.made < this.budget;
  }

  /**
   * A call of the lane as its item: an image_generation_call, or for an MCP tool an approval request when the tool
   * needs one, else an mcp_call; not yet made.
   */
  itemFor(call: ToolCall): ServerCall | McpApprovalRequest {
    if (this.images && call.function.name === IMAGE_GENERATION) return this.images.itemFor(call.function.arguments);
    const { server, tool } = this.byLane.get(call.function.name)!;
    const base = { server_label: server.tool.server_label, name: tool.name, arguments: call.function.arguments };
    return approvalNeeded(server.tool, tool)
      ? { type: 'mcp_approval_request', id: itemId('mcpr'), ...base }
      : {
          type: 'mcp_call',
          id: itemId('mcp'),
          status: 'in_progress',
          ...base,
          output: null,
          error: null,
          approval_request_id: null,
        };
  }

  /** The item of a call with its arguments as the lane finished writing them (a stream adds the call before). */
  withArguments<T extends ServerCall | McpApprovalRequest>(item: T, args: string): T {
    return item.type === 'image_generation_call'
      ? (this.images!.withArguments(item, args) as T)
      : { ...item, arguments: args };
  }

  /** A call not made (the response ended first, or the budget was spent): incomplete, or for an image failed. */
  notMade<T extends ServerCall>(item: T): T {
    return (item.type === 'image_generation_call' ? imageNotMade(item) : { ...item, status: 'incomplete' }) as T;
  }

  /** Makes a call: the item completed or failed (a server's or the images lane's failure is the call's, never thrown). */
  async run<T extends ServerCall>(item: T): Promise<T> {
    if (this.beforeFirstCall) {
      await this.beforeFirstCall();
      this.beforeFirstCall = undefined;
    }
    if (item.type === 'image_generation_call') {
      this.made++;
      return (await this.images!.run(item, this.abort.signal)) as T;
    }
    return (await this.runMcp(item as McpCall)) as T;
  }

  /**
   * A made call's events in a stream, before (`running`: in progress, and generating for an image) and after it is
   * made (`made`: completed or failed; an image's partial image), as OpenAI names them. An MCP call's arguments.done
   * comes before these (the caller's).
   */
  emitPhase(
    emit: Emit,
    phase: 'running' | 'made',
    at: { output_index: number; item_id: string },
    item: ServerCall,
  ): void {
    if (item.type === 'image_generation_call') {
      if (phase === 'running') this.images!.emitRunning(emit, at);
      else this.images!.emitMade(emit, at, item);
      return;
    }
    if (phase === 'running') emit('response.mcp_call.in_progress', at);
    else emit(item.status === 'failed' ? 'response.mcp_call.failed' : 'response.mcp_call.completed', at);
  }

  /** Makes a call on its MCP server (see `run`). */
  private async runMcp(item: McpCall): Promise<McpCall> {
    this.made++;
    const server = this.servers.get(item.server_label)!;
    let args: unknown;
    try {
      args = item.arguments.trim() === '' ? {} : JSON.parse(item.arguments);
    } catch {
      args = undefined;
    }
    if (args === null || typeof args !== 'object' || Array.isArray(args))
      return {
        ...item,
        status: 'failed',
        error: { type: 'mcp_protocol_error', code: -32602, message: 'The arguments are not a JSON object.' },
      };
    const r = await this.connection(server.tool)
      .then((c) => c.callTool(item.name, args as Record<string, unknown>))
      .catch((err: unknown) => {
        if (this.abort.signal.aborted) throw err;
        const f = err instanceof remote().RemoteMcpFailure ? err : undefined;
        return {
          output: null,
          error: {
            type: 'http_error' as const,
            code: f?.kind === 'timeout' ? 504 : 502,
            message: f?.message ?? String(err),
          },
        };
      });
    return { ...item, status: r.error ? 'failed' : 'completed', output: r.output, error: r.error };
  }

  /**
   * The calls the client approved (see `mcpApprovals`), made now, and the lane's messages for them (a declined call
   * is answered "declined"). Checked before any call is made. They count against `max_tool_calls`: `mcpApprovals`
   * refuses more than it allows, and a call past the budget is not made here either (incomplete, as in a round).
   * @throws AppError 400 for an answer to a request of a server or tool this request does not offer
   */
  async approved(todo: readonly Approval[]): Promise<{ items: McpCall[]; messages: ChatMessageIn[] }> {
    for (const { request, path } of todo)
      if (!this.has(mcpLaneName(request.server_label, request.name))) throw notOffered(request, path);
    const items: McpCall[] = [];
    const messages: ChatMessageIn[] = [];
    for (const { request, approve, reason } of todo) {
      const call: McpCall = {
        type: 'mcp_call',
        id: request.id,
        status: 'in_progress',
        server_label: request.server_label,
        name: request.name,
        arguments: request.arguments,
        output: null,
        error: null,
        approval_request_id: request.id,
      };
      if (approve) {
        const ran = this.open ? await unlessClientGone(this.abort, () => this.run(call)) : this.notMade(call);
        const done = { ...ran, id: itemId('mcp') };
        items.push(done);
        const m = mcpCallMessages(done);
        messages.push({ role: 'assistant', content: null, tool_calls: [m.call] }, m.answer as ChatMessageIn);
      } else {
        const m = mcpCallMessages(call);
        messages.push(
          { role: 'assistant', content: null, tool_calls: [m.call] },
          {
            role: 'tool',
            tool_call_id: m.call.id,
            content: `The user declined this call${reason ? `: ${reason}` : '.'}`,
          },
        );
      }
    }
    return { items, messages };
  }

  /**
   * The lane's request for the round after one whose server-run calls were made: the round's answer and the calls' results
   * appended; the choice left to the model, or none once the budget is spent.
   */
  nextRequest(req: ModelRequest, content: string, calls: ServerCall[]): ModelRequest {
    const asked = calls.map((d) => serverCallMessages(d));
    const messages: ChatMessageIn[] = [
      ...req.messages,
      { role: 'assistant', content: content || null, tool_calls: asked.map((m) => m.call) },
      ...asked.map((m) => m.answer as ChatMessageIn),
    ];
    // The tools stay declared (a history with calls needs them, and a parallel_tool_calls setting needs tools); once
    // the budget is spent the model may call none.
    return {
      ...req,
      messages,
      ...(this.open ? (req.tool_choice !== undefined ? { tool_choice: 'auto' } : {}) : { tool_choice: 'none' }),
    };
  }

  /** The lead's part of this session: its items' events (a list's, an approved call's). */
  emit(emit: (type: string, data: Record<string, unknown>) => void, first: number, items: readonly OutputItem[]): void {
    items.forEach((item, k) => {
      const output_index = first + k;
      const at = { output_index, item_id: (item as { id: string }).id };
      if (item.type === 'mcp_list_tools') {
        emit('response.output_item.added', { output_index, item: { ...item, tools: [] } });
        emit('response.mcp_list_tools.in_progress', at);
        emit('response.mcp_list_tools.completed', at);
        emit('response.output_item.done', { output_index, item });
      } else if (item.type === 'mcp_call') emitCall(emit, output_index, item, true);
    });
  }

  private connection(tool: McpTool): Promise<RemoteMcp> {
    if (this.closed)
      return Promise.reject(
        new (remote().RemoteMcpFailure)('failed', 'The response has ended: its MCP sessions are closed.'),
      );
    let c = this.connections.get(tool.server_label);
    if (!c) {
      const headers: Record<string, string> = { ...(tool.headers ?? {}) };
      if (tool.authorization != null) headers.authorization = `Bearer ${tool.authorization}`;
      c = remote().RemoteMcp.connect({
        url: tool.server_url!,
        headers,
        allowPrivate: this.config.allowPrivate,
        signal: this.abort.signal,
      });
      // A failed connection is tried again by the next call, not remembered.
      c.catch(() => this.connections.delete(tool.server_label));
      this.connections.set(tool.server_label, c);
    }
    return c;
  }

  /** True once a call was made (a batch line that fails after one is not tried again: it would make it twice). */
  get called(): boolean {
    return this.made > 0;
  }

  /** Closes the servers' connections (their sessions end with the response). */
  async close(): Promise<void> {
    this.closed = true;
    this.detach?.();
    this.detach = undefined;
    const open = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(open.map((c) => c.then((x) => x.close()).catch(() => undefined)));
  }
}

/** An approval the client answered in this input: the request it answers, the answer, where it is in the input. */
export interface Approval {
  request: McpApprovalRequest;
  approve: boolean;
  reason: string | null;
  path: string;
}

const notOffered = (request: McpApprovalRequest, path: string) =>
  new AppError(
    'invalid_request',
    `${path.slice(5)}: the approved call is of '${request.name}' on '${request.server_label}', which this request's mcp tools do not offer; send that server's mcp tool again.`,
    { details: [{ path, message: 'tool not offered' }] },
  );

/**
 * The approval answers of a request's input (mcp_approval_response items), each with the request of the conversation it
 * answers; an answer to a request whose call the conversation already holds is left out (a retried request does not call
 * twice). Read before any server is reached.
 *
 * The request answered may be in this request's own input: a client that keeps its own history (`store: false`) sends
 * the service's approval requests back with its answers, and nothing tells those apart from requests it wrote itself.
 * So the bound is the budget: more approved calls than `max_tool_calls` allows (at most MCP_CALLS_MAX) is 400, and made
 * up requests get a client no more calls than `require_approval: "never"` would.
 * @throws AppError 400 for an answer to no request of the conversation, an answer with no mcp tool to run it, or more
 *   approved calls than `max_tool_calls` allows
 */
export function mcpApprovals(
  body: CreateResponseRequest,
  input: NormalizedInput,
  all: readonly StoredItem[],
): Approval[] {
  const todo: Approval[] = [];
  input.items.forEach((item, k) => {
    if (item.type !== 'mcp_approval_response') return;
    const path = `body.input.${input.origin[k]}.approval_request_id`;
    const request = all.find(
      (i): i is McpApprovalRequest => i.type === 'mcp_approval_request' && i.id === item.approval_request_id,
    );
    if (!request)
      throw new AppError(
        'invalid_request',
        `${path.slice(5)}: no mcp_approval_request '${item.approval_request_id}' in this conversation.`,
        { details: [{ path, message: 'unknown approval request' }] },
      );
    if (all.some((i) => i.type === 'mcp_call' && i.approval_request_id === request.id)) return;
    const twice = todo.find((t) => t.request.id === request.id);
    if (twice) {
      if (twice.approve !== item.approve)
        throw new AppError(
          'invalid_request',
          `${path.slice(5)}: this request is both approved and declined in the input.`,
          {
            details: [{ path, message: 'conflicting answers' }],
          },
        );
      return;
    }
    if (!body.tools?.some((t) => t.type === 'mcp' && t.server_label === request.server_label))
      throw notOffered(request, path);
    todo.push({ request, approve: item.approve, reason: item.reason, path });
  });
  const approved = todo.filter((t) => t.approve);
  const budget = callBudget(body);
  if (approved.length > budget) {
    const path = approved[budget].path;
    const limit =
      budget >= MCP_CALLS_MAX
        ? `${MCP_CALLS_MAX}, the most one response makes); approve the others in a later request.`
        : `max_tool_calls: ${budget}${body.max_tool_calls == null ? ' by default' : ''}); approve the others in a later request, or raise max_tool_calls (at most ${MCP_CALLS_MAX}).`;
    throw new AppError(
      'invalid_request',
      `${path.slice(5)}: this input approves ${approved.length} MCP calls, more than one response may make (${limit}`,
      { details: [{ path, message: 'more approved calls than max_tool_calls' }] },
    );
  }
  return todo;
}

/**
 * An mcp_call's events once it has been made: (added, when `added`), its arguments, in progress, completed or failed,
 * done.
 */
function emitCall(
  emit: (type: string, data: Record<string, unknown>) => void,
  output_index: number,
  item: McpCall,
  added: boolean,
): void {
  const at = { output_index, item_id: item.id };
  if (added)
    emit('response.output_item.added', {
      output_index,
      item: { ...item, status: 'in_progress', output: null, error: null },
    });
  emit('response.mcp_call_arguments.done', { ...at, arguments: item.arguments });
  emit('response.mcp_call.in_progress', at);
  emit(item.status === 'failed' ? 'response.mcp_call.failed' : 'response.mcp_call.completed', at);
  emit('response.output_item.done', { output_index, item });
}

/** A lead with the MCP session's items after the searches' (the searches' annotations stay the answer's). */
export function withServerLead(lead: AnswerLead | undefined, mcp: ServerTools | undefined): AnswerLead | undefined {
  if (!mcp?.items.length) return lead;
  const own = mcp.items;
  const before = lead?.items ?? [];
  return {
    items: [...before, ...own],
    emit(emit, first) {
      lead?.emit(emit, first);
      mcp.emit(emit, first + before.length, own);
    },
    annotate: (text) => lead?.annotate(text) ?? [],
  };
}

/** What the lane answered over its rounds: the output items after the lead, the last round's result, the usage. */
export interface RoundsAnswer {
  output: OutputItem[];
  last: ModelResult;
  usage: ModelUsage;
  /** The text of every round, as the session keeps the turn. */
  content: string;
  /** Calls the client runs (function and custom) in the last round. */
  clientCalls: number;
}

/**
 * Answers in rounds while the model calls tools this service runs (MCP tools that need no approval, image generation):
 * each round's text and calls become items, the calls are made, and the lane is asked again with their results. A
 * round ends the answer when it has no such call, asks for an approval, has a call the client runs, or was cut short;
 * the budget spent, the tools are withdrawn.
 */
export async function completeWithServerTools(
  complete: (req: ModelRequest) => Promise<ModelResult>,
  req: ModelRequest,
  server: ServerTools,
  custom: ReadonlySet<string>,
  annotate: (text: string) => unknown[],
): Promise<RoundsAnswer> {
  const output: OutputItem[] = [];
  const texts: string[] = [];
  /** The rounds' text gets the searches' citations; their items lead the answer once, outside this. */
  const citing: AnswerLead = { items: [], emit: () => undefined, annotate };
  let usage: ModelUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  let next = req;
  for (;;) {
    const result = await complete(next);
    usage = sumUsage(usage, result.usage);
    if (result.content) texts.push(result.content);
    const calls = result.tool_calls ?? [];
    const own = calls.filter((c) => server.has(c.function.name));
    const status = responseStatus(result.finish_reason);
    if (!own.length) {
      output.push(...outputItems(result, true, custom, citing));
      return { output, last: result, usage, content: texts.join('\n\n'), clientCalls: calls.length };
    }
    if (result.content) output.push(...outputItems({ ...result, tool_calls: [] }, false, custom, citing));
    const cut = status !== 'completed';
    // A call after the budget was spent (the model was told to call none): the answer ends here.
    let stop = cut || !server.open;
    const mine: ServerCall[] = [];
    for (const c of calls) {
      if (!server.has(c.function.name)) {
        output.push(callItem(c, custom, status));
        stop = true;
        continue;
      }
      const item = server.itemFor(c);
      if (item.type === 'mcp_approval_request') {
        output.push(item);
        stop = true;
        continue;
      }
      const made = cut || !server.open ? server.notMade(item) : await server.run(item);
      mine.push(made);
      output.push(made);
    }
    if (stop)
      return {
        output,
        last: result,
        usage,
        content: texts.join('\n\n'),
        clientCalls: calls.length - own.length,
      };
    next = server.nextRequest(next, result.content, mine);
  }
}

/**
 * A prepared response answered whole (a JSON answer, a batch line): in rounds when it has server-run tools, else in one
 * lane call; the lead's items (searches, MCP lists, approved calls) first.
 */
export async function completeResponse(
  complete: (req: ModelRequest) => Promise<ModelResult>,
  req: ModelRequest,
  o: { server?: ServerTools; custom: ReadonlySet<string>; toolsOffered: boolean; lead?: AnswerLead },
): Promise<RoundsAnswer> {
  const { server, custom, lead } = o;
  if (server) {
    const a = await completeWithServerTools(complete, req, server, custom, (t) => lead?.annotate(t) ?? []);
    return { ...a, output: [...(lead?.items ?? []), ...a.output] };
  }
  const last = await complete(req);
  return {
    last,
    output: outputItems(last, o.toolsOffered, custom, lead),
    usage: last.usage,
    content: last.content,
    clientCalls: o.toolsOffered ? (last.tool_calls?.length ?? 0) : 0,
  };
}
