import { z } from 'zod';

/** Media types the knowledge store extracts text from (detected from content, not file names). */
export const SUPPORTED_MEDIA_TYPES = [
  'text/plain',
  'text/markdown',
  'text/html',
  'application/pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
] as const;
export type SupportedMediaType = (typeof SUPPORTED_MEDIA_TYPES)[number];

export const SOURCE_KINDS = ['upload', 'ingest', 'web', 'learn'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

const id = (what: string) =>
  z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9_-]+$/, `must be a ${what} id`);
export const SpaceId = id('space');
export const DocumentId = id('document');

/** `limit` and `offset` of every knowledge list endpoint. */
export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).describe('Page size, 1 to 100 (default 20).'),
  offset: z.coerce.number().int().min(0).max(100_000).default(0).describe('Items to skip (default 0).'),
});

export const DocumentRecord = z
  .object({
    id: z.string(),
    space_id: z.string().nullable(),
    source_kind: z
      .enum(SOURCE_KINDS)
      .describe('upload, ingest (text), web (ingested page) or learn (enterprise knowledge).'),
    title: z.string(),
    media_type: z.string().describe('Detected from the content.'),
    size_bytes: z.number().int().describe('Size of the original bytes.'),
    chunk_count: z.number().int(),
    provenance: z
      .record(z.string(), z.unknown())
      .describe('filename, url, final_url, job_id, source_index, from_document_id as they apply.'),
    excerpt: z.string().describe('The first 280 characters of the extracted text.'),
    created_at: z.string(),
  })
  .meta({ id: 'Document' });
export type DocumentRecord = z.infer<typeof DocumentRecord>;

export const DocumentList = z
  .object({ data: z.array(DocumentRecord), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'DocumentList' });

export const DocumentsQuery = PageQuery.extend({
  source_kind: z.enum(SOURCE_KINDS).optional().describe('Only documents of this source kind.'),
});

/** Documented form of the multipart upload (field `file` is the binary). */
export const UploadForm = z
  .object({
    file: z
      .string()
      .meta({ format: 'binary' })
      .describe('The document: text, markdown, HTML, PDF or DOCX (detected from content).'),
    title: z.string().max(300).optional().describe('Defaults to the document title, then the file name.'),
    space_id: z.string().optional().describe('Space to file the document in (POST /v1/documents/upload only).'),
  })
  .meta({ id: 'DocumentUpload' });

export const MEMORY_KINDS = ['note', 'knowledge', 'fact', 'preference', 'event', 'seen'] as const;

export const IngestBody = z
  .object({
    text: z.string().trim().min(1).max(500_000).describe('Text to remember and index.'),
    title: z.string().trim().min(1).max(300).optional(),
    kind: z
      .enum(MEMORY_KINDS)
      .default('note')
      .describe('Kind of the memory fragments; knowledge fragments are listed by /memories/knowledge.'),
    space_id: SpaceId.optional(),
  })
  .meta({ id: 'IngestRequest' });

export const IngestWebBody = z
  .object({
    url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .describe('Public http(s) page; private and loopback addresses are refused.'),
    space_id: SpaceId.optional(),
  })
  .meta({ id: 'IngestWebRequest' });

export const IngestResponse = z
  .object({
    document: DocumentRecord,
    chunks: z.number().int(),
    memories: z.number().int().describe('Memory fragments written (one per chunk).'),
  })
  .meta({ id: 'IngestResponse' });

export const MemoryRecord = z
  .object({
    id: z.string(),
    kind: z.string(),
    provenance: z
      .enum(['told', 'read', 'seen', 'learned'])
      .describe('told = ingested text, read = web page or upload, seen = image, learned = enterprise learning.'),
    content: z.string(),
    document_id: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'MemoryFragment' });

export const MemoryList = z
  .object({ data: z.array(MemoryRecord), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'MemoryList' });

export const MemoriesQuery = PageQuery.extend({ kind: z.enum(MEMORY_KINDS).optional() });

export const SearchQuery = z.object({
  q: z.string().trim().min(1).max(500).describe('Web-search syntax: words, "quoted phrases", OR, -excluded.'),
  limit: z.coerce.number().int().min(1).max(50).default(10),
  space_id: SpaceId.optional(),
  source_kind: z.enum(SOURCE_KINDS).optional(),
});

export const SearchHit = z
  .object({
    chunk_id: z.string(),
    document_id: z.string(),
    document_title: z.string(),
    source_kind: z.enum(SOURCE_KINDS),
    space_id: z.string().nullable(),
    ord: z.number().int().describe('Position of the chunk in its document.'),
    score: z.number().describe('Full-text rank, or the fused rank in hybrid mode (higher is better).'),
    snippet: z.string().describe('Plain-text excerpt around the matches.'),
    highlight: z.string().describe('The same excerpt, HTML-escaped, with matches wrapped in <mark>.'),
    url: z.string().nullable().describe('Source URL when the document came from the web.'),
  })
  .meta({ id: 'KnowledgeSearchHit' });

export const SearchResponse = z
  .object({ query: z.string(), mode: z.enum(['fts', 'hybrid']), data: z.array(SearchHit) })
  .meta({ id: 'KnowledgeSearchResponse' });

export const KnowledgeDeleteQuery = z.object({
  document_id: DocumentId.optional().describe(
    'Delete this one document (any source kind); omitted = every learned document.',
  ),
});

export const KnowledgeDeleteResponse = z
  .object({ deleted_documents: z.number().int(), deleted_chunks: z.number().int() })
  .meta({ id: 'KnowledgeDeleteResponse' });

export const KnowledgeHealth = z
  .object({
    search_mode: z.enum(['fts', 'hybrid']),
    vector_extension: z.boolean().describe('pgvector is available in this database.'),
    embeddings: z.boolean().describe('The provider answers /embeddings.'),
  })
  .meta({ id: 'KnowledgeHealth' });
export type KnowledgeHealth = z.infer<typeof KnowledgeHealth>;
