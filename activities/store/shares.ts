import { sql } from 'slonik';
import { z } from 'zod';
import type { Db } from './db';
import { randomToken } from './ids';

const ShareRow = z.object({
  id: z.string(),
  title: z.string(),
  format: z.enum(['markdown', 'html']),
  created_at: z.string(),
});
export type ShareRow = z.infer<typeof ShareRow>;

const PageRow = ShareRow.extend({ html: z.string(), content: z.string() });
export type SharePage = z.infer<typeof PageRow>;

/** Stores a share with its sanitised render. The id (`shr_` + 120 random bits) is the capability. */
export async function createShare(
  db: Db,
  s: { tenantId: string; title: string; format: 'markdown' | 'html'; content: string; html: string },
): Promise<ShareRow> {
  return db.one(sql.type(ShareRow)`
    INSERT INTO shares (id, tenant_id, title, format, content, html)
    VALUES (${`shr_${randomToken(24)}`}, ${s.tenantId}, ${s.title}, ${s.format}, ${s.content}, ${s.html})
    RETURNING id, title, format, created_at`);
}

export async function listShares(
  db: Db,
  opts: { tenantId: string; limit: number; offset: number },
): Promise<{ data: ShareRow[]; total: number }> {
  const [data, total] = await Promise.all([
    db.any(sql.type(ShareRow)`
      SELECT id, title, format, created_at FROM shares WHERE tenant_id = ${opts.tenantId}
      ORDER BY created_at DESC, id DESC LIMIT ${opts.limit} OFFSET ${opts.offset}`),
    db.oneFirst(
      sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM shares WHERE tenant_id = ${opts.tenantId}`,
    ),
  ]);
  return { data: [...data], total };
}

/**
 * The public page's row. Deliberately not tenant-filtered: the public render has no key, and the
 * unguessable id is the capability that grants read access.
 */
export async function getSharePage(db: Db, id: string): Promise<SharePage | null> {
  if (!/^shr_[0-9a-z]{24}$/.test(id)) return null;
  return db.maybeOne(
    sql.type(PageRow)`SELECT id, title, format, created_at, html, content FROM shares WHERE id = ${id}`,
  );
}
