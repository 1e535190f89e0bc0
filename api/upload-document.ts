import { detectMediaType } from '../activities/knowledge/sniff';
import { extractDocument } from '../activities/knowledge/extract';
import { indexDocument, requireSpace } from '../activities/knowledge/pipeline';
import { invalid } from '../schema/errors';
import { SpaceId, type DocumentRecord } from '../schema/knowledge';
import { principalOf, type AppContext } from './context';
import { readUpload } from './multipart';

/**
 * Handles a document upload (multipart field `file`, optional `title`, `space_id`): the type is
 * detected from the bytes, the text extracted by the matching parser, then chunked and indexed.
 */
export async function uploadDocument(ctx: AppContext, spaceFromPath?: string): Promise<DocumentRecord> {
  const { tenantId } = principalOf(ctx);
  const { config, db, log } = ctx.deps;
  const upload = await readUpload(ctx, config.uploadLimit);
  if (spaceFromPath) await requireSpace(db, tenantId, spaceFromPath);
  const title = upload.fields.title?.trim();
  if (title !== undefined && (title.length === 0 || title.length > 300)) {
    throw invalid([{ path: 'body.title', message: 'must be 1 to 300 characters' }]);
  }
  let spaceId = spaceFromPath;
  if (!spaceId && upload.fields.space_id !== undefined) {
    const parsed = SpaceId.safeParse(upload.fields.space_id);
    if (!parsed.success)
      throw invalid([{ path: 'body.space_id', message: parsed.error.issues[0]?.message ?? 'invalid' }]);
    spaceId = parsed.data;
  }
  const mediaType = await detectMediaType(upload.bytes);
  const extracted = await extractDocument(upload.bytes, mediaType);
  const r = await indexDocument(
    { db, config, log },
    {
      tenantId,
      spaceId,
      sourceKind: 'upload',
      title: title || extracted.title || upload.filename || 'Untitled document',
      mediaType,
      sizeBytes: upload.bytes.length,
      text: extracted.text,
      provenance: upload.filename ? { filename: upload.filename.slice(0, 255) } : {},
    },
  );
  ctx.status = 201;
  return r.document;
}
