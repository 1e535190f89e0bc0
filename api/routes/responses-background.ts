import type { BuiltinResults } from './responses-builtins';
import type { ServerToolsJob } from './responses-server-tools';
import type { ResponseJob } from '../../activities/responses/background';
import {
  cancelResponseRow,
  deleteResponse,
  eventIdOfSequence,
  getResponseRow,
  responseStream,
  saveResponse,
  writeResponseEvents,
} from '../../activities/store/responses';
import { AppError } from '../../schema/errors';
import type { AppContext } from '../context';
import { admittedWindows } from '../middleware/meter';
import { pipeEventStream } from '../sse';
import { startWithInput } from '../start-workflow';
import { cancelStoredJob } from '../workflow-clients/cancel';
import type { PersonaCall } from './chat-persona';
import { withOutcome } from './responses-items';

/**
 * Queues a background response: stores it (status queued, with the job its worker runs), its first two events
 * (response.created, response.queued), and starts its workflow (`resp_...`, visible in the Temporal UI).
 * @returns the queued Response object
 * @throws AppError service_unavailable when the workflow service cannot be reached (nothing is left stored)
 */
export async function queueBackgroundResponse(
  ctx: AppContext,
  o: {
    tenantId: string;
    id: string;
    previousId?: string;
    inputItems: unknown[];
    base: Record<string, unknown>;
    call: PersonaCall;
    custom: ReadonlySet<string>;
    /** The conversation it is made in (its turn is added when it is answered). */
    conversationId?: string;
    /** Its built-in tools' results (file and web search), found before it was queued: the answer starts with them. */
    builtins?: BuiltinResults;
    /** Its server-run tools (MCP servers, image generation), which the worker runs. */
    serverTools?: ServerToolsJob;
  },
): Promise<Record<string, unknown>> {
  const { call } = o;
  // The request counts under its lane in the usage report; its tokens are added when the worker has them.
  ctx.state.usage ??= { lane: call.lane, promptTokens: 0, completionTokens: 0, estimated: false };
  const { signal: _signal, ...req } = call.req;
  const job: ResponseJob = {
    req,
    toolsOffered: call.toolsOffered,
    custom: [...o.custom],
    session: call.sessionTurn,
    keyId: ctx.state.principal?.keyId ?? '',
    windows: admittedWindows(ctx),
    ...(o.conversationId !== undefined ? { conversation: { id: o.conversationId, items: o.inputItems } } : {}),
    ...(o.builtins ? { builtins: o.builtins } : {}),
    ...(o.serverTools ? { serverTools: o.serverTools } : {}),
  };
  const queued = withOutcome(o.base, { status: 'queued', output: [], usage: null, finish: 'stop' });
  await saveResponse(ctx.deps.db, {
    tenantId: o.tenantId,
    id: o.id,
    previousId: o.previousId,
    inputItems: o.inputItems,
    response: queued,
    job,
  });
  await writeResponseEvents(ctx.deps.db, {
    tenantId: o.tenantId,
    id: o.id,
    events: [
      { type: 'response.created', sequence_number: 0, response: queued },
      { type: 'response.queued', sequence_number: 1, response: queued },
    ],
  });
  await startWithInput(
    ctx,
    'backgroundResponseWorkflow',
    { tenantId: o.tenantId, responseId: o.id },
    {
      workflowId: o.id,
      kind: 'response',
      title: `Response on ${call.lane}`,
      onStartFailed: () => deleteResponse(ctx.deps.db, o.tenantId, o.id),
    },
  );
  return queued;
}

/**
 * A background response's events as OpenAI streams them (each an SSE `event:` with its JSON), after sequence number
 * `startingAfter` or the SSE id in Last-Event-ID, live until the response ends.
 * @throws AppError invalid_request for a response that was not a background one (it has no stored events)
 */
export async function streamBackgroundResponse(
  ctx: AppContext,
  o: { tenantId: string; id: string; response: Record<string, unknown>; startingAfter?: number; lastEventId?: number },
): Promise<void> {
  if (o.response.background !== true)
    throw new AppError(
      'invalid_request',
      'Only a background response can be streamed again: this one was answered in its request (GET it without stream).',
      { details: [{ path: 'query.stream', message: 'not a background response' }] },
    );
  const afterId =
    o.lastEventId ??
    (o.startingAfter !== undefined ? await eventIdOfSequence(ctx.deps.db, o.tenantId, o.id, o.startingAfter) : 0);
  pipeEventStream(ctx, {
    db: ctx.deps.db,
    tenantId: o.tenantId,
    stream: responseStream(o.id),
    afterId,
    // `end` (a cancelled response's) only closes the stream.
    toMessage: (row) => (row.type === 'end' ? null : { event: row.type, data: row.data }),
    isFinal: (row) =>
      row.type === 'end' ||
      row.type === 'response.completed' ||
      row.type === 'response.incomplete' ||
      row.type === 'response.failed',
  });
}

/**
 * POST /v1/responses/{id}/cancel: a running background response ends as cancelled (its stored state first, so the
 * answer is certain; then its workflow, whose later writes are refused); one that has ended is answered as it is.
 * @returns the Response object, or null when unknown
 * @throws AppError invalid_request for a response that was not a background one
 */
export async function cancelBackgroundResponse(
  ctx: AppContext,
  tenantId: string,
  id: string,
  /** The row as the caller read it already. */
  known?: Awaited<ReturnType<typeof getResponseRow>>,
): Promise<Record<string, unknown> | null> {
  const row = known ?? (await getResponseRow(ctx.deps.db, tenantId, id));
  if (!row) return null;
  if (row.response.background !== true)
    throw new AppError(
      'invalid_request',
      'Only background responses can be cancelled; this one was answered in its request (close the stream to stop one).',
    );
  if (!row.job) return row.response;
  const cancelled = await cancelResponseRow(ctx.deps.db, tenantId, id, (r) =>
    withOutcome(r, { status: 'cancelled', output: [], usage: null, finish: 'stop' }),
  );
  // Its workflow is cancelled only when this cancel ended it: when the run's last write won the row lock, the response
  // is answered and its workflow reports that (a cancel would race it to its end).
  if (cancelled) await cancelStoredJob(ctx, id, 'background response');
  return (
    (cancelled as Record<string, unknown> | null) ?? (await getResponseRow(ctx.deps.db, tenantId, id))?.response ?? null
  );
}
