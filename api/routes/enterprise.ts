import { z } from 'zod';
import { requireSpace, withSpace } from '../../activities/knowledge/pipeline';
import { searchKnowledge } from '../../activities/knowledge/search';
import { deleteKnowledge } from '../../activities/store/documents';
import { createLearnJob, finishLearnJob, getLearnJob } from '../../activities/store/learn-jobs';
import { AppError, notFound } from '../../schema/errors';
import { KnowledgeDeleteQuery, KnowledgeDeleteResponse, SearchQuery, SearchResponse } from '../../schema/knowledge';
import { LearnBody, LearnJobState, LearnStarted } from '../../schema/learn';
import { principalOf, type AppContext } from '../context';
import { jobIdFor } from '../idempotency';
import { defineRoute, type RouteSpec } from '../route';
import { cancelLearn, startLearn } from '../workflow-clients/knowledge';

/** Any runtime key of the tenant; wiping learned knowledge is the bulk record operation that needs runtime:records. */
const access = 'key' as const;
const bulkAccess = { scope: 'runtime:records' } as const;
const tags = ['enterprise knowledge'];
const jobParams = z.object({
  job_id: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9_-]+$/),
});

/** Enterprise learning jobs (workflow learn-<job_id>) and knowledge search (any key) and deletion (scope runtime:records). */
export function enterpriseRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/enterprise/learn',
      access,
      tags,
      summary:
        'Start a learning job: each source is fetched or read, parsed, chunked and indexed. Poll the job for progress.',
      body: LearnBody,
      status: 202,
      response: LearnStarted,
      idempotent: true,
      responses: {
        404: 'space_id is not one of your spaces.',
        503: 'The job could not be started (Temporal unavailable).',
      },
      example: {
        sources: [{ url: 'https://example.com/handbook' }, { text: 'Refunds within 30 days.', title: 'Refunds' }],
      },
      handler: async (ctx: AppContext, { body }) => {
        const { tenantId } = principalOf(ctx);
        const { db } = ctx.deps;
        await requireSpace(db, tenantId, body.space_id);
        const job = await withSpace(body.space_id, () =>
          createLearnJob(db, { id: jobIdFor(ctx, 'lrn'), tenantId, body }),
        );
        await startLearn(ctx, { jobId: job.id, tenantId, total: job.total }, () =>
          finishLearnJob(db, tenantId, job.id),
        );
        return { job_id: job.id, status: 'queued' as const };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/enterprise/learn/:job_id',
      access,
      tags,
      summary: 'Poll a learning job: status, progress and each source with its status and error.',
      params: jobParams,
      response: LearnJobState,
      handler: async (ctx: AppContext, { params }) => {
        const job = await getLearnJob(ctx.deps.db, principalOf(ctx).tenantId, params.job_id);
        if (!job) throw notFound(`Learning job ${params.job_id}`);
        return job;
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/enterprise/learn/:job_id/cancel',
      access,
      tags,
      summary: 'Cancel a running learning job; sources already learned stay, open ones become cancelled.',
      params: jobParams,
      status: 202,
      response: LearnStarted,
      responses: { 409: 'The job has already finished.' },
      handler: async (ctx: AppContext, { params }) => {
        const { tenantId } = principalOf(ctx);
        const job = await getLearnJob(ctx.deps.db, tenantId, params.job_id);
        if (!job) throw notFound(`Learning job ${params.job_id}`);
        if (job.finished_at)
          throw new AppError('conflict', `Learning job ${params.job_id} has already finished (${job.status}).`);
        const state = await cancelLearn(ctx, params.job_id);
        if (state !== 'RUNNING' && state !== 'CANCELLED') {
          // Closed without our cancel (completed, failed, terminated, or gone): the job is over.
          // Settle the row in case the workflow could not (terminated), so polling sees a final state.
          const status = await finishLearnJob(ctx.deps.db, tenantId, job.job_id);
          throw new AppError('conflict', `Learning job ${params.job_id} has already finished (${status}).`);
        }
        return { job_id: job.job_id, status: job.status };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/enterprise/knowledge/search',
      access,
      tags,
      summary: 'Search the knowledge store: ranked chunks with document references and highlighted snippets.',
      query: SearchQuery,
      response: SearchResponse,
      handler: async (ctx: AppContext, { query }) =>
        searchKnowledge(ctx.deps, {
          tenantId: principalOf(ctx).tenantId,
          q: query.q,
          limit: query.limit,
          spaceId: query.space_id,
          sourceKind: query.source_kind,
        }),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/enterprise/knowledge',
      access: bulkAccess,
      tags,
      summary: 'Delete learned knowledge: every learned document, or one document with ?document_id=.',
      query: KnowledgeDeleteQuery,
      response: KnowledgeDeleteResponse,
      responses: { 404: 'document_id is not one of your documents.' },
      handler: async (ctx: AppContext, { query }) => {
        const r = await deleteKnowledge(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          documentId: query.document_id,
        });
        if (query.document_id && r.documents === 0) throw notFound(`Document ${query.document_id}`);
        return { deleted_documents: r.documents, deleted_chunks: r.chunks };
      },
    }),
  ];
}
