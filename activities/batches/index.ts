import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import type { DatabaseTransactionConnection } from 'slonik';
import { completionBody, completionId } from '../../api/routes/chat-shared';
import { responseStatus, withOutcome } from '../../api/routes/responses-items';
import { builtinLead, type BuiltinResults } from '../../api/routes/responses-builtins';
import { completeResponse, ServerTools, type ServerToolsJob } from '../../api/routes/responses-server-tools';
import { saveChatCompletion } from '../store/chat-completions';
import { saveResponse } from '../store/responses';
import { answerEmbeddings } from '../../api/routes/embeddings';
import { answerCompletion } from '../../api/routes/completions';
import { answerModeration } from '../../api/routes/moderations';
import { MODERATION_MODEL, type CreateModerationRequest } from '../../schema/moderations';
import type { CreateCompletionRequest } from '../../schema/completions';
import type { CreateEmbeddingRequest } from '../../schema/embeddings';
import { AppError } from '../../schema/errors';
import type { ActivityDeps } from '../deps';
import type { ModelRequest } from '../providers/types';
import {
  batchAccount,
  batchStatus,
  failCalledRequests,
  finishBatch,
  markCalled,
  markCancelling,
  pendingRequests,
  recordOutcomes,
} from '../store/batches';
import { randomToken } from '../store/ids';
import { chargeWork } from '../store/rate-limits';
import { workerShutdownFailure } from '../tasks/errors';

/** One planned request of a batch (`batch_requests.job`): what its endpoint's route would have run. */
export type BatchJob =
  | {
      kind: 'chat';
      req: Omit<ModelRequest, 'signal'>;
      toolsOffered: boolean;
      /** The answer's meta block (its provider set when known). */
      meta: Record<string, unknown>;
      /** `store: true`: the completion is stored under this id with the request's messages and metadata. */
      store?: { id: string; messages: unknown[]; metadata: Record<string, string> };
    }
  | { kind: 'embeddings'; body: CreateEmbeddingRequest }
  | { kind: 'completions'; body: CreateCompletionRequest }
  | { kind: 'moderations'; body: CreateModerationRequest }
  | {
      kind: 'responses';
      req: Omit<ModelRequest, 'signal'>;
      toolsOffered: boolean;
      custom: string[];
      /** The Response object before its outcome (its id, the request's settings). */
      base: Record<string, unknown>;
      /** Stored as a response made with POST /v1/responses is (store not false): its input items and what it continues. */
      store: { inputItems: unknown[]; previousId?: string } | null;
      /** Its built-in tools' results (file and web search), found when the batch was created: the answer starts with them. */
      builtins?: BuiltinResults;
      /** Its image_generation tool: images the lane asks for are made, then the lane is asked again. */
      serverTools?: ServerToolsJob;
    };

/** A request answered (or failed), as the run records it. */
type Outcome = { ok: boolean; result: object; lane: string; tokensIn: number; tokensOut: number; line: number };

export interface BatchInput {
  tenantId: string;
  batchId: string;
  /** When the batch's window ends (ms since the epoch): it expires then if still running. */
  expiresAtMs?: number;
}

/** Requests read from the database at a time. */
const PAGE = 50;
/** Tries of one request whose failure may pass (429, 5xx, timeouts), 1 s then 2 s apart. */
const TRIES = 3;
const TRANSIENT = new Set(['rate_limited', 'upstream_error', 'upstream_timeout']);
/** A request whose server-run call an earlier attempt began (see failCalledRequests): its error line says so. */
export const CALLED_BEFORE =
  'The worker stopped after making an image for this request, before its answer was recorded; it is not answered ' +
  'again, which would make the image twice. Send the request again.';

export function createBatchActivities(deps: ActivityDeps) {
  const { db, log, config } = deps;

  /** One request answered: its output line (OpenAI's shape) and tokens; errors become an error line. */
  async function answer(
    tenantId: string,
    job: BatchJob,
    customId: string,
    signal: AbortSignal,
    /** Marks the request before its first server-run call (see markCalled). */
    mark: () => Promise<void>,
  ): Promise<Omit<Outcome, 'line'>> {
    const requestId = `req_${randomToken(24)}`;
    const line = (status: number, body: unknown) => ({
      id: `batch_req_${randomToken(24)}`,
      custom_id: customId,
      response: { status_code: status, request_id: requestId, body },
      error: null,
    });
    const lane =
      job.kind === 'embeddings'
        ? 'svc-embed'
        : job.kind === 'moderations'
          ? MODERATION_MODEL
          : job.kind === 'completions'
            ? job.body.model
            : job.req.lane;
    /** A responses line's server-run call was made (an image): a failure after it is not tried again. */
    let called = false;
    /** The mark before the first call failed (the database): nothing was made, so the request may be tried again. */
    let unmarked = false;
    for (let attempt = 1; ; attempt++) {
      unmarked = false;
      try {
        if (job.kind === 'embeddings') {
          const body = await answerEmbeddings(config, job.body, signal);
          return { ok: true, result: line(200, body), lane, tokensIn: body.usage.prompt_tokens, tokensOut: 0 };
        }
        if (job.kind === 'moderations') {
          const body = await answerModeration(config, job.body, signal);
          return { ok: true, result: line(200, body), lane, tokensIn: 0, tokensOut: 0 };
        }
        if (job.kind === 'completions') {
          const body = await answerCompletion(deps.models!, job.body, signal);
          const { prompt_tokens: tokensIn, completion_tokens: tokensOut } = body.usage;
          return { ok: true, result: line(200, body), lane, tokensIn, tokensOut };
        }
        if (job.kind === 'responses') {
          const lead = builtinLead(job.builtins);
          const custom = new Set(job.custom);
          // With image_generation the answer comes in rounds: the images the lane asks for are made between them.
          const server = job.serverTools
            ? await ServerTools.fromJob(
                { db, config },
                { tenantId, responseId: String(job.base.id) },
                job.serverTools,
                signal,
              )
            : undefined;
          // Marked before its first image is made: an attempt that stops before the outcome is recorded leaves the
          // mark, and the next attempt ends the request failed instead of making the image again.
          if (server)
            server.beforeFirstCall = () =>
              mark().catch((err: unknown) => {
                unmarked = true;
                throw err;
              });
          const answer = await completeResponse(
            (r) => deps.models!.complete({ ...r, signal }),
            { ...job.req, signal },
            { server, custom, toolsOffered: job.toolsOffered, lead },
          ).finally(() => {
            called ||= server?.called ?? false;
            return server?.close();
          });
          const result = answer.last;
          const response = withOutcome(job.base, {
            status: responseStatus(result.finish_reason),
            output: answer.output,
            usage: answer.usage,
            finish: result.finish_reason,
            provider: result.provider,
          });
          if (job.store)
            await saveResponse(db, {
              tenantId,
              id: String(job.base.id),
              previousId: job.store.previousId,
              inputItems: job.store.inputItems,
              response,
              replace: true,
            });
          return {
            ok: true,
            result: line(200, response),
            lane,
            tokensIn: answer.usage.prompt_tokens,
            tokensOut: answer.usage.completion_tokens,
          };
        }
        const result = await deps.models!.complete({ ...job.req, signal });
        const tokens = { tokensIn: result.usage.prompt_tokens, tokensOut: result.usage.completion_tokens };
        const body = completionBody({
          id: job.store?.id ?? completionId(),
          lane: job.req.lane,
          result,
          meta: { ...job.meta, provider: result.provider },
          toolsOffered: job.toolsOffered,
        });
        if (job.store)
          await saveChatCompletion(db, {
            tenantId,
            id: body.id,
            model: body.model,
            metadata: job.store.metadata,
            messages: job.store.messages,
            completion: { ...body, request_id: requestId },
            replace: true,
          });
        return { ok: true, result: line(200, body), lane, ...tokens };
      } catch (err) {
        if (signal.aborted) throw err;
        const e = err instanceof AppError ? err : new AppError('internal', 'The request failed.');
        if (!(err instanceof AppError)) log.error({ err, batch_request: customId }, 'batch request failed');
        if ((TRANSIENT.has(e.code) || unmarked) && attempt < TRIES && !called) {
          // An abort ends the wait early; the next try then throws it.
          await sleep(1000 * attempt, undefined, { signal }).catch(() => undefined);
          continue;
        }
        return {
          ok: false,
          result: line(e.status, { error: { message: e.message, type: e.code, code: e.code } }),
          lane,
          tokensIn: 0,
          tokensOut: 0,
        };
      }
    }
  }

  return {
    /**
     * Answers a batch's pending requests, `SVC_BATCH_CONCURRENCY` at a time, a page of 50 after another; each page's
     * outcomes are recorded at once (a request's outcome once), so a retried run resumes with what is still pending.
     * Stops at a cancel (the batch marked cancelling, or the workflow cancelled).
     */
    async runBatchRequests(i: BatchInput): Promise<{ cancelled: boolean; expired: boolean }> {
      const ctx = Context.current();
      // Who pays for the run (the usage report's key, the admitted windows): read once, they never change.
      const account = await batchAccount(db, i.tenantId, i.batchId);
      // Requests an earlier attempt made an image for and did not record end failed, before any pending one is read:
      // answering them again would make the image twice (decisions.md: a line that made an image is not tried again).
      // Requests without a server-run call are asked again, as before.
      const calledBefore = await failCalledRequests(db, i.tenantId, i.batchId, CALLED_BEFORE);
      if (calledBefore)
        log.warn({ batch: i.batchId, requests: calledBefore }, 'batch requests called before, not answered again');
      const stopped = new AbortController();
      // Why the run stopped early (an outcome write failed twice in a row, a page could not be read): the attempt fails
      // with it once what was answered is recorded, and Temporal's retry resumes with what is still pending.
      const broken = new AbortController();
      const halt = (err: unknown) => {
        if (!broken.signal.aborted) broken.abort(err);
      };
      const signal = AbortSignal.any([ctx.cancellationSignal, stopped.signal, broken.signal]);
      let done = 0;
      let expired = false;
      // Every second: a heartbeat, and a look at the batch, so a cancel (marked cancelling by the API) or the end of its
      // window stops the run within a second, without waiting for Temporal's throttled heartbeat to bring it.
      const beat = setInterval(() => {
        ctx.heartbeat({ done });
        void batchStatus(db, i.tenantId, i.batchId)
          .then((s) => {
            expired = s?.status === 'in_progress' && s.expired;
            if (s?.status !== 'in_progress' || s.expired) stopped.abort(new Error('the batch no longer runs'));
          })
          .catch(() => undefined);
      }, 1000);
      // A pool of lanes over the pending requests, read a page ahead in line order (a slow request holds its lane
      // only, never a page); outcomes are recorded as they gather: every 50, and every second.
      let queue: Awaited<ReturnType<typeof pendingRequests>>[number][] = [];
      let afterLine = 0;
      let exhausted = false;
      let refill: Promise<void> | undefined;
      const take = async () => {
        while (!queue.length && !exhausted && !signal.aborted) {
          refill ??= pendingRequests(db, i.batchId, PAGE, afterLine).then((page) => {
            queue = [...queue, ...page];
            if (page.length) afterLine = page[page.length - 1].line;
            if (page.length < PAGE) exhausted = true;
            refill = undefined;
          });
          await refill;
        }
        return signal.aborted ? undefined : queue.shift();
      };
      let gathered: Outcome[] = [];
      let failedWrites = 0;
      let recording = Promise.resolve();
      /**
       * Records what has gathered by the time the write starts. A failed write never loses outcomes and never blocks
       * later writes: its outcomes go back into `gathered` and the chain goes on, so the next write (the next tick, or
       * the next 50) tries them again. A second failure in a row stops the run: the lanes are aborted (the requests in
       * flight stay pending), the last write below tries once more, and the attempt fails, so the retry resumes from
       * what was recorded. Chosen over stopping at the first failure, which would redo the failed write's outcomes (up
       * to 50 answered requests) and the requests in flight for a blip; and over retrying for as long as it fails,
       * which would keep paying the upstream for answers it cannot keep. The upstream work redone is then nothing
       * after a blip, and at most the outcomes of about two writes plus the requests in flight when the database stays
       * down. Recording twice charges nothing twice: `recordOutcomes` only records lines still pending, and only the
       * lines it recorded in this transaction are charged, so a write that committed but was reported failed (a
       * connection lost at COMMIT) charges nothing again.
       */
      const record = () => {
        const write = recording.then(async () => {
          const batch = gathered;
          gathered = [];
          if (!batch.length) return;
          try {
            // The outcomes and their usage in one transaction: an attempt that stops between them cannot leave answered
            // requests uncharged (the next finds them answered), and only what this attempt recorded is charged.
            await db.transaction(async (tx) => {
              const recorded = await recordOutcomes(tx, i.tenantId, i.batchId, batch);
              await chargeUsage(
                tx,
                batch.filter((o) => recorded.has(o.line)),
              );
            });
          } catch (err) {
            gathered = [...batch, ...gathered];
            failedWrites++;
            log.warn(
              { err: (err as Error).message, batch: i.batchId, held: gathered.length },
              'batch outcomes not recorded',
            );
            if (failedWrites >= 2) halt(err);
            throw err;
          }
          failedWrites = 0;
          done += batch.length;
          ctx.heartbeat({ done });
        });
        recording = write.catch(() => undefined);
        return write;
      };
      const recorder = setInterval(() => void record().catch(() => undefined), 1000);
      const lane = async () => {
        for (let r = await take(); r; r = await take()) {
          try {
            // Answered first, then pushed: `gathered` is swapped by each record while the answer is awaited.
            const outcome = await answer(i.tenantId, r.job as BatchJob, r.custom_id, signal, () =>
              markCalled(db, i.batchId, r.line),
            );
            gathered.push({ ...outcome, line: r.line });
          } catch {
            // Aborted: the request stays pending.
          }
          // After a failed write the next try waits for the tick (a second), not the next answer.
          if (gathered.length >= PAGE && !failedWrites) void record().catch(() => undefined);
        }
      };
      try {
        // A lane that fails (a page that cannot be read) stops the others, and what they answered is still recorded.
        await Promise.all(Array.from({ length: config.batch.concurrency }, () => lane().catch(halt)));
      } finally {
        clearInterval(beat);
        clearInterval(recorder);
      }
      // Everything answered is recorded before the run ends. The lanes have stopped, so this write holds all this
      // attempt answered and did not record: it is tried three times, a second apart, before its failure fails the
      // attempt (the retry would ask the upstream again for all of it, and resumes with what is pending).
      for (let tries = 1; ; tries++) {
        try {
          await record();
          break;
        } catch (err) {
          if (tries >= 3) throw err;
          ctx.heartbeat({ done });
          await sleep(1000);
        }
      }
      if (ctx.cancellationSignal.aborted) {
        const shutdown = workerShutdownFailure(ctx.cancellationSignal);
        if (shutdown) throw shutdown;
        throw new CancelledFailure('batch cancelled');
      }
      if (broken.signal.aborted) {
        const err = broken.signal.reason as Error;
        throw new Error(`The batch's run stopped: ${err?.message ?? String(err)}`, { cause: err });
      }
      const cancelled = stopped.signal.aborted && !expired;
      const how = expired ? 'batch expired' : cancelled ? 'batch cancelled' : 'batch answered';
      log.info({ batch: i.batchId, answered: done }, how);
      return { cancelled, expired };

      /** The outcomes' tokens in the usage report, per lane (a request each), and charged to the batch's windows. */
      async function chargeUsage(
        tx: DatabaseTransactionConnection,
        outcomes: ReadonlyArray<{ ok: boolean; lane: string; tokensIn: number; tokensOut: number }>,
      ) {
        const byLane = new Map<string, { requests: number; errors: number; tokensIn: number; tokensOut: number }>();
        for (const o of outcomes) {
          const u = byLane.get(o.lane) ?? { requests: 0, errors: 0, tokensIn: 0, tokensOut: 0 };
          u.requests++;
          if (!o.ok) u.errors++;
          u.tokensIn += o.tokensIn;
          u.tokensOut += o.tokensOut;
          byLane.set(o.lane, u);
        }
        // Token budgets see batch work too: the tokens are charged to the windows the batch was admitted in.
        // Its own savepoint: usage that cannot be recorded does not undo the outcomes.
        await tx
          .transaction((t) =>
            chargeWork(t, {
              tenantId: i.tenantId,
              keyId: account?.key_id ?? '',
              windows: account?.windows ?? [],
              lanes: [...byLane].map(([lane, u]) => ({ lane, ...u })),
            }),
          )
          .catch((err: Error) => log.warn({ err: err.message, batch: i.batchId }, 'batch usage not recorded'));
      }
    },

    /**
     * Marks a running batch cancelling (the workflow was cancelled: an operator, a revoked key), so its run sees it
     * with its next look at the batch (within a second) rather than with Temporal's throttled heartbeat.
     */
    async markBatchCancelling(i: BatchInput): Promise<void> {
      await markCancelling(db, i.tenantId, i.batchId);
    },

    /** Ends a batch as completed or cancelled: its output and error files written, its status and times set. */
    async finishBatchRun(
      i: BatchInput & { outcome: 'completed' | 'cancelled' | 'expired'; failPending?: string },
    ): Promise<void> {
      await finishBatch(db, i.tenantId, i.batchId, i.outcome, i.failPending);
    },
  };
}
