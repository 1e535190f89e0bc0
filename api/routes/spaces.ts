import { z } from 'zod';
import { listDocuments } from '../../activities/store/documents';
import { createSpace, deleteSpace, getSpace, listSpaces } from '../../activities/store/spaces';
import { notFound } from '../../schema/errors';
import { DocumentList, DocumentRecord, PageQuery, SpaceId, UploadForm } from '../../schema/knowledge';
import { SpaceBody, SpaceDeleted, SpaceList, SpaceRecord } from '../../schema/spaces';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { uploadDocument } from '../upload-document';

const access = { scope: 'runtime:spaces' } as const;
const tags = ['spaces'];
const params = z.object({ id: SpaceId });

/** Spaces: document collections of the key's tenant (scope runtime:spaces). */
export function spacesRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/spaces',
      access,
      tags,
      summary: 'List your spaces, newest first (legacy spaces without an owner are hidden until migrated).',
      query: PageQuery,
      response: SpaceList,
      handler: async (ctx: AppContext, { query }) => {
        const page = await listSpaces(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          limit: query.limit,
          offset: query.offset,
        });
        return { ...page, limit: query.limit, offset: query.offset };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/spaces',
      access,
      tags,
      summary: 'Create a space.',
      body: SpaceBody,
      status: 201,
      response: SpaceRecord,
      example: { name: 'Handbook', description: 'Company policies' },
      handler: async (ctx: AppContext, { body }) =>
        createSpace(ctx.deps.db, { tenantId: principalOf(ctx).tenantId, ...body }),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/spaces/:id',
      access,
      tags,
      summary: 'Delete a space and its documents (with their chunks and memory fragments).',
      params,
      response: SpaceDeleted,
      handler: async (ctx: AppContext, { params: p }) => {
        const r = await deleteSpace(ctx.deps.db, principalOf(ctx).tenantId, p.id);
        if (!r) throw notFound(`Space ${p.id}`);
        return { id: p.id, deleted: true as const, deleted_documents: r.deletedDocuments };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/spaces/:id/documents',
      access,
      tags,
      summary: 'Upload a document into the space (multipart field "file", optional "title").',
      params,
      consumes: 'multipart/form-data',
      body: UploadForm.omit({ space_id: true }),
      status: 201,
      response: DocumentRecord,
      responses: { 413: 'File over the upload limit.', 415: 'Not multipart, or a file type that is not supported.' },
      handler: async (ctx: AppContext, { params: p }) => uploadDocument(ctx, p.id),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/spaces/:id/documents',
      access,
      tags,
      summary: 'List the documents of the space, newest first.',
      params,
      query: PageQuery,
      response: DocumentList,
      handler: async (ctx: AppContext, { params: p, query }) => {
        const { tenantId } = principalOf(ctx);
        if (!(await getSpace(ctx.deps.db, tenantId, p.id))) throw notFound(`Space ${p.id}`);
        const page = await listDocuments(ctx.deps.db, {
          tenantId,
          spaceId: p.id,
          limit: query.limit,
          offset: query.offset,
        });
        return { ...page, limit: query.limit, offset: query.offset };
      },
    }),
  ];
}
