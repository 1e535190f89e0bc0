import { Context } from '@temporalio/activity';
import type { Config } from '../../schema/config';
import { AppError } from '../../schema/errors';
import type { ActivityDeps } from '../deps';
import { extractDocument } from '../knowledge/extract';
import { embedTexts } from '../knowledge/embeddings';
import { detectMediaType } from '../knowledge/sniff';
import { decodeTokens, encodeText } from '../providers/token-count';
import {
  failIndexing,
  fileToIndex,
  finishIndexing,
  startIndexing,
  writeChunks,
  type FileGeneration,
} from '../store/vector-stores';

/**
 * Chunks embedded and written at a time: a file of megabytes (thousands of windows) is never held as one statement
 * or one set of vectors (1,536 floats each), and the activity heartbeats between groups.
 */
export const CHUNK_GROUP = 256;

/**
 * A text as OpenAI's vector stores chunk it: windows of at most `max` o200k tokens, each starting `max - overlap`
 * tokens after the one before. A window's edges can fall inside a character's bytes: the broken characters at its
 * ends are dropped.
 */
export async function tokenWindows(text: string, max: number, overlap: number): Promise<string[]> {
  const tokens = await encodeText(text);
  const step = Math.max(1, max - overlap);
  const out: string[] = [];
  for (let at = 0; at < tokens.length; at += step) {
    const piece = decodeTokens(tokens.slice(at, at + max))
      .replace(/^\uFFFD+|\uFFFD+$/g, '')
      .trim();
    if (piece) out.push(piece);
    if (at + max >= tokens.length) break;
  }
  return out;
}

/** A vector as a unit vector (so that cosine similarity is a dot product). */
export function unit(v: number[]): number[] {
  const norm = Math.sqrt(v.reduce((n, x) => n + x * x, 0));
  return norm > 0 ? v.map((x) => x / norm) : v;
}

/**
 * The chunks' embeddings from the configured provider, as unit vectors; none when no provider is configured or it
 * fails (full-text search still finds the file: vectors improve a search, they are not required).
 */
export async function embedChunks(
  deps: { config: Config; log: ActivityDeps['log'] },
  texts: string[],
  signal?: AbortSignal,
): Promise<number[][] | undefined> {
  if (!deps.config.openai.baseUrl || !texts.length) return undefined;
  try {
    return (await embedTexts(deps.config, texts, { signal, timeoutMs: 60_000 })).map(unit);
  } catch (err) {
    if (signal?.aborted) throw err;
    deps.log.warn({ err: (err as Error).message }, 'vector store file: embedding failed; indexed for full text only');
    return undefined;
  }
}

/** The vector store file failure a refusal of the file stands for (OpenAI's codes). */
function fileError(err: AppError): { code: 'unsupported_file' | 'invalid_file'; message: string } {
  return { code: err.code === 'unsupported_media_type' ? 'unsupported_file' : 'invalid_file', message: err.message };
}

/** The activities that read files into vector stores (workflow `vectorStoreFilesWorkflow`). */
export function createVectorStoreActivities(deps: ActivityDeps) {
  return {
    /**
     * Reads one file into its store: its text extracted by the parsers uploads use (type from the bytes; PDF and
     * DOCX in the capped processes), split into token windows, embedded when a provider is configured, written
     * with status `completed`. A file that cannot be read (unsupported, empty, unreadable, deleted from /v1/files)
     * is marked `failed` with OpenAI's code and not retried. Nothing is written when the file was removed, added
     * again, or its batch cancelled meanwhile.
     * @returns the file's status as this activity left it
     */
    async indexVectorStoreFile(ref: FileGeneration): Promise<'completed' | 'failed' | 'skipped'> {
      const ctx = Context.current();
      const file = await fileToIndex(deps.db, ref);
      if (!file) return 'skipped';
      const beat = setInterval(() => ctx.heartbeat(), 2000);
      try {
        if (!file.bytes) {
          await failIndexing(deps.db, {
            ...ref,
            error: { code: 'invalid_file', message: 'The file was deleted or expired before it was read.' },
          });
          return 'failed';
        }
        let text: string;
        try {
          text = (await extractDocument(file.bytes, await detectMediaType(file.bytes))).text;
        } catch (err) {
          if (!(err instanceof AppError) || err.status >= 500) throw err;
          await failIndexing(deps.db, { ...ref, error: fileError(err) });
          return 'failed';
        }
        const windows = await tokenWindows(text, file.maxTokens, file.overlapTokens);
        if (!(await startIndexing(deps.db, ref))) return 'skipped';
        let usageBytes = 0;
        let embedded = 0;
        for (let from = 0; from < windows.length; from += CHUNK_GROUP) {
          ctx.heartbeat();
          const group = windows.slice(from, from + CHUNK_GROUP);
          const vectors = await embedChunks(deps, group, ctx.cancellationSignal);
          if (vectors) embedded += group.length;
          const chunks = group.map((t, i) => ({ text: t, embedding: vectors?.[i] }));
          if (!(await writeChunks(deps.db, { ...ref, from, chunks }))) return 'skipped';
          usageBytes += chunks.reduce((n, c) => n + Buffer.byteLength(c.text) + (c.embedding?.length ?? 0) * 4, 0);
        }
        const written = await finishIndexing(deps.db, { ...ref, content: text, usageBytes });
        deps.log.info(
          { vector_store_id: ref.storeId, file_id: ref.fileId, chunks: windows.length, embedded, written },
          'vector store file indexed',
        );
        return written ? 'completed' : 'skipped';
      } finally {
        clearInterval(beat);
      }
    },

    /** Marks a file `failed` (server_error) when its indexing failed past its retries. */
    async vectorStoreFileFailed(ref: FileGeneration & { message: string }): Promise<void> {
      await failIndexing(deps.db, { ...ref, error: { code: 'server_error', message: ref.message } });
    },
  };
}
