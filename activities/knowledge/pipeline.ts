import type { Logger } from 'pino';
import { ForeignKeyIntegrityConstraintViolationError } from 'slonik';
import type { Config } from '../../schema/config';
import { AppError } from '../../schema/errors';
import type { Db } from '../store/db';
import { insertDocument, type InsertedDocument, type NewDocument } from '../store/documents';
import { getSpace } from '../store/spaces';
import { chunkText } from './chunker';
import { embedTexts } from './embeddings';
import { knowledgeMode } from './mode';

export interface KnowledgeDeps {
  db: Db;
  config: Config;
  log: Logger;
}

/** @throws AppError not_found when the space is not the tenant's */
export async function requireSpace(db: Db, tenantId: string, spaceId: string | undefined | null): Promise<void> {
  if (spaceId && !(await getSpace(db, tenantId, spaceId)))
    throw new AppError('not_found', `Space ${spaceId} not found.`);
}

/**
 * A write that references a space checked by requireSpace can still lose the race with a delete
 * of that space: the insert then fails on the space_id foreign key (SQLSTATE 23503). Runs `write`
 * and turns exactly that failure into the same 404 requireSpace gives.
 * @throws AppError not_found when the space vanished before the write
 */
export async function withSpace<T>(spaceId: string | undefined | null, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (spaceId && isSpaceForeignKeyViolation(err))
      throw new AppError('not_found', `Space ${spaceId} not found.`, { cause: err });
    throw err;
  }
}

/** True for a foreign-key violation on a space_id column (slonik parses the columns from the error detail). */
function isSpaceForeignKeyViolation(err: unknown): boolean {
  return err instanceof ForeignKeyIntegrityConstraintViolationError && err.columns.includes('space_id');
}

/**
 * What the knowledge store writes for a document: the space checked, the text chunked and (in
 * hybrid mode) embedded. `indexDocument` writes it; a caller that writes the document together
 * with its own row (the task `save` step) takes it from here.
 */
export async function prepareDocument(
  deps: KnowledgeDeps,
  doc: Omit<NewDocument, 'chunks' | 'embeddings'>,
): Promise<NewDocument> {
  await requireSpace(deps.db, doc.tenantId, doc.spaceId);
  const chunks = chunkText(doc.text);
  let embeddings: number[][] | undefined;
  const mode = await knowledgeMode(deps.db, deps.config, deps.log);
  if (mode.search_mode === 'hybrid' && chunks.length) {
    try {
      embeddings = await embedTexts(deps.config, chunks);
    } catch (err) {
      // Full-text search still finds the document; vectors are an improvement, not a requirement.
      deps.log.warn({ err: (err as Error).message }, 'embedding failed; document indexed for full-text search only');
    }
  }
  return { ...doc, chunks, embeddings };
}

/**
 * The one write path of the knowledge store: chunk, embed (hybrid mode), then write the document,
 * its chunks and memory fragments in one transaction.
 */
export async function indexDocument(
  deps: KnowledgeDeps,
  doc: Omit<NewDocument, 'chunks' | 'embeddings'>,
): Promise<InsertedDocument> {
  const full = await prepareDocument(deps, doc);
  return withSpace(doc.spaceId, () => insertDocument(deps.db, full));
}
