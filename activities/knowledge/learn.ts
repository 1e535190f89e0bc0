import { ApplicationFailure, Context } from '@temporalio/activity';
import { AppError } from '../../schema/errors';
import type { LearnStatus } from '../../schema/learn';
import { deleteKnowledge, getDocumentText } from '../store/documents';
import { finishLearnJob, getSourceSpec, setJobRunning, setSourceState, type SourceSpec } from '../store/learn-jobs';
import { indexDocument, type KnowledgeDeps } from './pipeline';
import { fetchDocument, UpstreamRejected } from './web-fetch';

export interface SourceRef {
  tenantId: string;
  jobId: string;
  index: number;
}

async function sourceText(deps: KnowledgeDeps, ref: SourceRef, spec: SourceSpec, signal: AbortSignal) {
  if (spec.kind === 'text')
    return {
      title: spec.title ?? 'Learned text',
      text: spec.text ?? '',
      mediaType: 'text/plain',
      size: Buffer.byteLength(spec.text ?? ''),
      provenance: {},
    };
  if (spec.kind === 'document') {
    const doc = await getDocumentText(deps.db, ref.tenantId, spec.source_document_id ?? '');
    if (!doc) throw new AppError('not_found', `Document ${spec.source_document_id} not found.`);
    return {
      title: doc.title,
      text: doc.text,
      mediaType: doc.media_type,
      size: Buffer.byteLength(doc.text),
      provenance: { from_document_id: spec.source_document_id },
    };
  }
  const page = await fetchDocument(spec.url ?? '', {
    allowPrivate: deps.config.allowPrivateFetch,
    maxBytes: deps.config.uploadLimit,
    timeoutMs: 20_000,
    signal,
  });
  return {
    title: page.title ?? new URL(page.finalUrl).hostname,
    text: page.text,
    mediaType: page.mediaType,
    size: page.body.length,
    provenance: { url: spec.url, final_url: page.finalUrl },
  };
}

/** Activities of enterprise learning (workflow `learn-<jobId>`); each is idempotent. */
export function createLearnActivities(deps: KnowledgeDeps) {
  return {
    async learnStart(ref: Omit<SourceRef, 'index'>): Promise<void> {
      await setJobRunning(deps.db, ref.tenantId, ref.jobId);
    },

    /**
     * Fetches/parses, chunks and indexes one source, recording its progress. A source that can never
     * succeed (refused URL, HTTP error page, unsupported type, unknown document) fails with the
     * non-retryable type `SourceRejected`; transient upstream trouble is retried.
     */
    async learnSource(ref: SourceRef): Promise<{ status: string; documentId?: string; chunks?: number }> {
      const ctx = Context.current();
      const spec = await getSourceSpec(deps.db, ref.tenantId, ref.jobId, ref.index);
      if (!spec)
        throw ApplicationFailure.nonRetryable(`Source ${ref.index} of job ${ref.jobId} not found.`, 'SourceRejected');
      if (spec.status !== 'pending' && spec.status !== 'running') return { status: spec.status };
      await setSourceState(deps.db, { ...ref, idx: ref.index, status: 'running' });
      const beat = setInterval(() => ctx.heartbeat(), 2000);
      try {
        const src = await sourceText(deps, ref, spec, ctx.cancellationSignal);
        ctx.heartbeat();
        const r = await indexDocument(deps, {
          tenantId: ref.tenantId,
          spaceId: spec.space_id,
          sourceKind: 'learn',
          title: spec.title ?? src.title,
          mediaType: src.mediaType,
          sizeBytes: src.size,
          text: src.text,
          provenance: { ...src.provenance, job_id: ref.jobId, source_index: String(ref.index) },
          memory: { kind: 'knowledge', provenance: 'learned' },
        });
        const kept = await setSourceState(deps.db, {
          ...ref,
          idx: ref.index,
          status: 'completed',
          documentId: r.document.id,
          chunks: r.chunks,
        });
        if (!kept) {
          // The source ended while it was indexed. Cancelled (its job was): what it learned goes too. Completed (an
          // attempt beside this one, the same document): it stays.
          const now = await getSourceSpec(deps.db, ref.tenantId, ref.jobId, ref.index);
          if (now?.status === 'cancelled')
            await deleteKnowledge(deps.db, { tenantId: ref.tenantId, documentId: r.document.id });
          return { status: now?.status ?? 'cancelled' };
        }
        return { status: 'completed', documentId: r.document.id, chunks: r.chunks };
      } catch (err) {
        if (ctx.cancellationSignal.aborted) throw err; // worker shutdown or cancellation: let Temporal decide
        if (err instanceof UpstreamRejected || (err instanceof AppError && err.status < 500))
          throw ApplicationFailure.nonRetryable(err.message, 'SourceRejected');
        if (err instanceof AppError) throw ApplicationFailure.retryable(err.message, 'SourceUnavailable');
        throw err;
      } finally {
        clearInterval(beat);
      }
    },

    async learnSourceFailed(ref: SourceRef & { error: string }): Promise<void> {
      await setSourceState(deps.db, {
        tenantId: ref.tenantId,
        jobId: ref.jobId,
        idx: ref.index,
        status: 'failed',
        error: ref.error,
      });
    },

    async learnFinish(ref: Omit<SourceRef, 'index'> & { cancelled?: boolean }): Promise<LearnStatus> {
      return finishLearnJob(deps.db, ref.tenantId, ref.jobId, { cancelled: ref.cancelled });
    },
  };
}
