import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { randomToken } from './ids';

/**
 * Stores an image content-addressed per tenant (the same bytes are kept once) and mints an
 * unguessable link (160 random bits) valid until `ttlSeconds` from now. Expired links of the
 * tenant, and images no link points to any more, are removed on the way.
 */
export async function storeImageLink(
  db: DatabasePool,
  i: { tenantId: string; sha256: string; contentType: string; bytes: Buffer; ttlSeconds: number },
): Promise<{ token: string; expiresAt: string }> {
  return db.transaction(async (tx) => {
    await tx.query(sql.unsafe`DELETE FROM image_links WHERE tenant_id = ${i.tenantId} AND expires_at < now()`);
    await tx.query(sql.unsafe`
      DELETE FROM image_blobs b WHERE b.tenant_id = ${i.tenantId} AND b.sha256 <> ${i.sha256}
        AND NOT EXISTS (SELECT 1 FROM image_links l WHERE l.tenant_id = b.tenant_id AND l.sha256 = b.sha256)`);
    await tx.query(sql.unsafe`
      INSERT INTO image_blobs (tenant_id, sha256, content_type, bytes)
      VALUES (${i.tenantId}, ${i.sha256}, ${i.contentType}, ${sql.binary(i.bytes)})
      ON CONFLICT (tenant_id, sha256) DO NOTHING`);
    const token = randomToken(32);
    const expiresAt = await tx.oneFirst(sql.type(z.object({ expires_at: z.string() }))`
      INSERT INTO image_links (token, tenant_id, sha256, expires_at)
      VALUES (${token}, ${i.tenantId}, ${i.sha256}, now() + make_interval(secs => ${i.ttlSeconds}))
      RETURNING expires_at`);
    return { token, expiresAt };
  });
}

/** The image behind a link that has not expired, or null. */
export async function imageByToken(
  db: DatabasePool,
  token: string,
): Promise<{ contentType: string; bytes: Buffer; expiresAt: string } | null> {
  const row = await db.maybeOne(sql.type(
    z.object({ content_type: z.string(), bytes: z.instanceof(Buffer), expires_at: z.string() }),
  )`
    SELECT b.content_type, b.bytes, l.expires_at FROM image_links l
    JOIN image_blobs b ON b.tenant_id = l.tenant_id AND b.sha256 = l.sha256
    WHERE l.token = ${token} AND l.expires_at > now()`);
  return row ? { contentType: row.content_type, bytes: row.bytes, expiresAt: row.expires_at } : null;
}
