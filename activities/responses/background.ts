import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { CommonQueryMethods, DatabaseTransactionConnection } from 'slonik';
import { storeTurn, type SessionTurn } from '../../api/routes/chat-persona';
import { midResponseError, emitResponseEvents, type ResponseEventSink } from '../../api/routes/responses-sse';
import { outputAsInput, withOutcome, type OutputItem } from '../../api/routes/responses-items';
import { builtinLead, type BuiltinResults } from '../../api/routes/responses-builtins';
import { ServerTools, withServerLead, type ServerToolsJob } from '../../api/routes/responses-server-tools';
import { addConversationItems } from '../store/conversations';
import { AppError } from '../../schema/errors';
import { canFallback } from '../providers/errors';
import type { ActivityDeps } from '../deps';
import type { ModelRequest } from '../providers/types';
import { chargeWork, type CounterDelta } from '../store/rate-limits';
import {
  cancelResponseRow,
  getResponseRow,
  lastResponseSequence,
  responseRunning,
  writeResponseEvents,
} from '../store/responses';
import { workerShutdownFailure } from '../tasks/errors';
import { tokenStream } from '../live/token-stream';

/** What a background response's worker runs, stored with the response while it runs (`responses.job`). */
export interface ResponseJob {
  /** The lane request as the persona pipeline planned it (no signal: the activity gives its own). */
  req: Omit<ModelRequest, 'signal'>;
  toolsOffered: boolean;
  /** The names of the custom tools offered. */
  custom: string[];
  /** The session turn to store with the answer (X-Session-ID). */
  session: SessionTurn | null;
  /** The key that asked, for the usage report. */
  keyId: string;
  /** The rate-limit windows the request was admitted in: its tokens are charged to them. */
  windows: Array<Omit<CounterDelta, 'requests' | 'tokens'>>;
  /** The conversation the response is made in: its input items, added with the output once it is answered. */
  conversation?: { id: string; items: unknown[] };
  /** Its built-in tools' results (file and web search), found when it was queued: the answer starts with and cites them. */
  builtins?: BuiltinResults;
  /**
   * Its server-run tools: the worker makes the calls of the MCP servers' tools and the images the lane asks for, then
   * asks the lane again.
   */
  serverTools?: ServerToolsJob;
}

export interface BackgroundResponseInput {
  tenantId: string;
  responseId: string;
}

/** How often stored events are flushed while the answer streams (text deltas of one flush become one event). */
const FLUSH_MS = 50;
/** Model-layer errors that retrying cannot fix. */
const PERMANENT = new Set(['model_not_found', 'service_unavailable', 'invalid_request', 'not_found', 'forbidden']);

type StoredEvent = { type: string; sequence_number?: number } & Record<string, unknown>;

/**
 * Consecutive text (or call-argument) deltas of one item as one delta: a flush stores a few events, not one per token.
 * Sequence numbers are given after this, so they stay consecutive.
 */
export function mergeDeltas(events: StoredEvent[]): StoredEvent[] {
  const out: StoredEvent[] = [];
  for (const e of events) {
    const last = out[out.length - 1];
    const merges =
      last &&
      last.type === e.type &&
      last.item_id === e.item_id &&
      (e.type === 'response.output_text.delta' || e.type === 'response.function_call_arguments.delta');
    if (!merges) {
      out.push({ ...e });
      continue;
    }
    last.delta = String(last.delta) + String(e.delta);
    if (Array.isArray(last.logprobs) && Array.isArray(e.logprobs)) last.logprobs = [...last.logprobs, ...e.logprobs];
  }
  return out;
}

/** The lifecycle events that end a response's stream. */
const FINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

export function createResponseActivities(deps: ActivityDeps) {
  const { db, log } = deps;

  /** Charges a finished answer's tokens to the windows it was admitted in and to the usage report. */
  function charge(
    tx: CommonQueryMethods,
    job: ResponseJob,
    tenantId: string,
    lane: string,
    response: Record<string, unknown>,
  ) {
    const usage = response.usage as { input_tokens?: number; output_tokens?: number } | undefined;
    const tokens = { tokensIn: usage?.input_tokens ?? 0, tokensOut: usage?.output_tokens ?? 0 };
    // The request itself was counted when it was admitted.
    return chargeWork(tx, {
      tenantId,
      keyId: job.keyId,
      windows: job.windows,
      lanes: [{ lane, requests: 0, errors: 0, ...tokens }],
    });
  }

  return {
    /**
     * Runs a background response (POST /v1/responses, background: true): calls its lane, stores the answer's events on
     * `response:<id>` as it streams (flushed every 50 ms, heartbeating), and ends the response with its last write.
     * Failures before the first delta retry (the workflow's policy); an attempt that finds part of an answer stored
     * (its worker stopped mid-answer) ends the response as failed rather than answer twice.
     */
    async runBackgroundResponse(i: BackgroundResponseInput): Promise<{ status: string }> {
      const row = await getResponseRow(db, i.tenantId, i.responseId);
      if (!row?.job) return { status: row ? String(row.response.status) : 'deleted' };
      const job = row.job as unknown as ResponseJob;
      const base = row.response;
      const ctx = Context.current();
      const seq0 = await lastResponseSequence(db, i.tenantId, i.responseId);
      if (seq0 > 1) {
        await endRun(i, 'failed', {
          code: 'server_error',
          message: 'The worker running this response stopped in the middle of its answer; create the response again.',
        });
        return { status: 'failed' };
      }

      // Every second: a heartbeat (Temporal's cancellation arrives with its answers, a dead worker is noticed), and a
      // look at the row, so a cancel through the API stops the upstream call within a second even while it is silent.
      const ended = new AbortController();
      const beat = setInterval(() => {
        ctx.heartbeat();
        void responseRunning(db, i.tenantId, i.responseId)
          .then((running) => {
            if (!running) ended.abort(new Error('the response ended'));
          })
          .catch(() => undefined);
      }, 1000);
      const signal = AbortSignal.any([ctx.cancellationSignal, ended.signal]);
      let server: ServerTools | undefined;
      try {
        server = job.serverTools
          ? await ServerTools.fromJob(deps, { tenantId: i.tenantId, responseId: i.responseId }, job.serverTools, signal)
          : undefined;
      } catch (err) {
        clearInterval(beat);
        throw failureOf(err, ctx.cancellationSignal);
      }
      const stream = deps.models!.stream({ ...job.req, signal });
      const it = stream[Symbol.asyncIterator]();
      // A response made in a session (X-Session-ID) sends its tokens to the sockets subscribed to that session, as a
      // chat's stream does; the worker cannot see who subscribed, so it publishes whenever there is a session.
      const tap = job.session ? tokenStream(deps, i.tenantId, job.session.sessionKey) : undefined;
      try {
        let first;
        try {
          first = await it.next();
        } catch (err) {
          if (ended.signal.aborted) return { status: 'cancelled' };
          throw failureOf(err, ctx.cancellationSignal);
        }
        const provider = await stream.provider;

        // Events buffered between flushes; flushes run one after another.
        let buffer: StoredEvent[] = [];
        let seq = seq0 + 1;
        let timer: NodeJS.Timeout | undefined;
        let writes = Promise.resolve();
        let gone = false;
        let writeError: unknown;
        let last: Record<string, unknown> | undefined;
        let answered: { content: string; provider: string; calls: number } | undefined;
        // `also` runs in the write's transaction when the response still ran: what must land with its end.
        const flush = (
          o: { response?: object; end?: boolean; also?: (tx: DatabaseTransactionConnection) => Promise<unknown> } = {},
        ) => {
          clearTimeout(timer);
          timer = undefined;
          const events = mergeDeltas(buffer).map(({ type, ...e }) => ({ type, sequence_number: seq++, ...e }));
          buffer = [];
          const { also, ...write } = o;
          writes = writes.then(async () => {
            if (gone || writeError) return;
            try {
              const put = (c: CommonQueryMethods) =>
                writeResponseEvents(c, { tenantId: i.tenantId, id: i.responseId, events, ...write });
              // One statement for a flush of deltas; a transaction only for the ending write and what lands with it.
              const live = also
                ? await db.transaction(async (tx) => {
                    const ran = await put(tx);
                    if (ran) await also(tx);
                    return ran;
                  })
                : await put(db);
              if (!live) gone = true;
              ctx.heartbeat();
            } catch (err) {
              writeError = err;
            }
          });
          return writes;
        };
        const snapshotOf = (s: Parameters<typeof withOutcome>[1]) => withOutcome(base, s);
        const inProgress = snapshotOf({ status: 'in_progress', output: [], usage: null, finish: 'stop', provider });
        const sink: ResponseEventSink = {
          emit: (type, data) => {
            buffer.push({ type, ...data });
            if (FINAL.has(type)) last = data.response as Record<string, unknown>;
            else timer ??= setTimeout(() => void flush(), FLUSH_MS);
          },
          stopped: () => gone || writeError !== undefined || signal.aborted,
          opening: ['response.in_progress'],
          onDelta: tap ? (d) => tap.push(d) : undefined,
          failure: (err) => {
            if (!(err instanceof AppError)) log.error({ err, response: i.responseId }, 'background response failed');
            return midResponseError(
              err instanceof AppError ? err : { code: 'server_error', message: 'The response failed.' },
            );
          },
        };
        // The row says in_progress from the first flush on.
        await flush({ response: inProgress });
        const outcome = await emitResponseEvents(
          it,
          first,
          provider,
          {
            toolsOffered: job.toolsOffered,
            custom: new Set(job.custom),
            snapshot: (s) => snapshotOf({ ...s, output: s.output as OutputItem[] }),
            // The MCP servers' lists and the calls approved when it was queued come first.
            lead: withServerLead(builtinLead(job.builtins), server),
            // MCP calls and images the lane asks for are made here, then the lane is asked again (each round a stream
            // of its own).
            mcp: server
              ? { session: server, req: { ...job.req, signal }, stream: (r) => deps.models!.stream({ ...r, signal }) }
              : undefined,
            onComplete: async (r) => {
              answered = r;
            },
          },
          sink,
        );
        // The session's and the conversation's turns and the usage land with the write that ends the response: a
        // reader who sees it answered sees them, a cancel that came first leaves none, and a retry after a crash finds
        // it ended rather than add them twice. Usage that cannot be recorded (its own savepoint) does not undo the
        // answer.
        const conversation = job.conversation;
        const answer = last;
        const ending = answer
          ? async (tx: DatabaseTransactionConnection) => {
              if (answered) await storeTurn(tx, job.session, answered.content, answered.provider, answered.calls);
              if (conversation)
                await addConversationItems(tx, i.tenantId, conversation.id, [
                  ...(conversation.items as Array<{ id: string }>),
                  ...outputAsInput(answer.output as OutputItem[]),
                ]);
              await tx
                .transaction((t) => charge(t, job, i.tenantId, job.req.lane, answer))
                .catch((err: Error) =>
                  log.warn({ err: err.message, response: i.responseId }, 'background response usage not recorded'),
                );
            }
          : undefined;
        if (outcome === 'ended' && last) await flush({ response: last, end: true, also: ending });
        else await writes;
        // The socket's subscribers hear the end once the response reads ended.
        tap?.end();
        clearInterval(beat);
        if (writeError) throw writeError;
        // The run's last write ended the response (no cancel came first): it is answered, whatever arrives now.
        if (outcome === 'ended' && last && !gone) {
          const status = String(last.status);
          log.info({ response: i.responseId, status, lane: job.req.lane }, 'background response ended');
          return { status };
        }
        if (ctx.cancellationSignal.aborted) {
          const shutdown = workerShutdownFailure(ctx.cancellationSignal);
          if (shutdown) throw shutdown;
          throw new CancelledFailure('response cancelled');
        }
        return { status: 'cancelled' };
      } finally {
        clearInterval(beat);
        tap?.end();
        await it.return?.(undefined).catch(() => undefined);
        await server?.close();
      }
    },

    /**
     * Ends a background response that still runs as failed (its run gave up) or cancelled (its workflow was).
     * @returns the status it is stored with once ended: this write's, or that of the write that ended it first (the
     * run's own last write, a cancel by the API); null when it is unknown or expired
     */
    async endBackgroundResponse(
      i: BackgroundResponseInput & { status: 'failed' | 'cancelled'; error?: { code: string; message: string } },
    ): Promise<string | null> {
      await endRun(i, i.status, i.error);
      const row = await getResponseRow(db, i.tenantId, i.responseId);
      return row && !row.job && typeof row.response.status === 'string' ? row.response.status : null;
    },
  };

  /** Ends a running background response: failed with a response.failed event, or cancelled (no event: its stream ends). */
  async function endRun(
    i: BackgroundResponseInput,
    status: 'failed' | 'cancelled',
    error?: { code: string; message: string },
  ): Promise<void> {
    if (status === 'cancelled') {
      await cancelResponseRow(db, i.tenantId, i.responseId, (r) =>
        withOutcome(r, { status: 'cancelled', output: [], usage: null, finish: 'stop' }),
      );
      return;
    }
    const row = await getResponseRow(db, i.tenantId, i.responseId);
    if (!row?.job) return;
    const response = withOutcome(row.response, { status: 'failed', output: [], usage: null, finish: 'stop', error });
    const seq = (await lastResponseSequence(db, i.tenantId, i.responseId)) + 1;
    await writeResponseEvents(db, {
      tenantId: i.tenantId,
      id: i.responseId,
      events: [{ type: 'response.failed', sequence_number: seq, response }],
      response,
      end: true,
    });
  }
}

/** The failure Temporal sees for an error before the first delta: permanent ones are not retried. */
function failureOf(err: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return workerShutdownFailure(signal) ?? new CancelledFailure('response cancelled');
  if (err instanceof AppError)
    return ApplicationFailure.create({
      message: err.message,
      type: err.code,
      // An upstream's 4xx (other than 401/403/408/429, which another provider or a later try may pass) is permanent.
      nonRetryable: PERMANENT.has(err.code) || (err.code === 'upstream_error' && !canFallback(err)),
    });
  return err;
}
