import { getDocument, listDocuments } from '../../activities/store/documents';
import { notFound } from '../../schema/errors';
import { DocumentId, DocumentList, DocumentRecord, DocumentsQuery, UploadForm } from '../../schema/knowledge';
import { z } from 'zod';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { uploadDocument } from '../upload-document';

const access = 'key' as const;
const tags = ['documents'];

/** Document upload and listing (any runtime key of the tenant). */
export function documentsRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/documents/upload',
      access,
      tags,
      summary: 'Upload a document (multipart field "file"; text, markdown, HTML, PDF or DOCX, detected from content).',
      consumes: 'multipart/form-data',
      body: UploadForm,
      status: 201,
      response: DocumentRecord,
      responses: {
        404: 'space_id is not one of your spaces.',
        413: 'File over the upload limit (SVC_UPLOAD_LIMIT, default 20 MiB).',
        415: 'Not multipart, or a file type that is not supported.',
      },
      handler: async (ctx: AppContext) => uploadDocument(ctx),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/documents',
      access,
      tags,
      summary: 'List documents of every source kind, newest first.',
      query: DocumentsQuery,
      response: DocumentList,
      handler: async (ctx: AppContext, { query }) => {
        const { tenantId } = principalOf(ctx);
        const page = await listDocuments(ctx.deps.db, {
          tenantId,
          sourceKind: query.source_kind,
          limit: query.limit,
          offset: query.offset,
        });
        return { ...page, limit: query.limit, offset: query.offset };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/documents/:id',
      access,
      tags,
      summary: 'One document.',
      params: z.object({ id: DocumentId }),
      response: DocumentRecord,
      handler: async (ctx: AppContext, { params }) => {
        const doc = await getDocument(ctx.deps.db, principalOf(ctx).tenantId, params.id);
        if (!doc) throw notFound(`Document ${params.id}`);
        return doc;
      },
    }),
  ];
}
