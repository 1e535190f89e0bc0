import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

const Row = z.object({
  url: z.string(),
  etag: z.string().nullable(),
  last_modified: z.string().nullable(),
  page: z.unknown(),
  fetched_at: z.string(),
  fresh: z.boolean(),
});
export type WebCacheRow = z.infer<typeof Row>;

/** The cached page of a tenant under `cacheKey`, with whether its TTL still holds. */
export async function getCachedPage(
  db: CommonQueryMethods,
  tenantId: string,
  cacheKey: string,
): Promise<WebCacheRow | null> {
  return db.maybeOne(sql.type(Row)`
    SELECT url, etag, last_modified, page, fetched_at, expires_at > now() AS fresh
    FROM web_cache WHERE tenant_id = ${tenantId} AND cache_key = ${cacheKey}`);
}

/** Stores (or replaces) a page with its validators and a new expiry. */
export async function putCachedPage(
  db: CommonQueryMethods,
  o: {
    tenantId: string;
    cacheKey: string;
    url: string;
    etag?: string;
    lastModified?: string;
    page: unknown;
    ttlSeconds: number;
  },
): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO web_cache (tenant_id, cache_key, url, etag, last_modified, page, fetched_at, expires_at)
    VALUES (${o.tenantId}, ${o.cacheKey}, ${o.url}, ${o.etag ?? null}, ${o.lastModified ?? null}, ${sql.jsonb(o.page as never)},
            now(), now() + make_interval(secs => ${o.ttlSeconds}))
    ON CONFLICT (tenant_id, cache_key) DO UPDATE SET url = EXCLUDED.url, etag = EXCLUDED.etag, last_modified = EXCLUDED.last_modified,
      page = EXCLUDED.page, fetched_at = EXCLUDED.fetched_at, expires_at = EXCLUDED.expires_at`);
}

/** A 304 revalidation: the stored page holds for another TTL. */
export async function refreshCachedPage(
  db: CommonQueryMethods,
  tenantId: string,
  cacheKey: string,
  ttlSeconds: number,
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE web_cache SET expires_at = now() + make_interval(secs => ${ttlSeconds})
    WHERE tenant_id = ${tenantId} AND cache_key = ${cacheKey}`);
}
