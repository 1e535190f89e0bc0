import { sql } from 'slonik';
import { z } from 'zod';
import { DEFAULT_IDENTITY, IdentityProfile } from '../../schema/identity';
import type { Db } from './db';

const Row = z.object({ profile: z.record(z.string(), z.unknown()), updated_at: z.string() });

/** The tenant's active profile, or the default one (updated_at null) when none was saved. */
export async function getIdentity(
  db: Db,
  tenantId: string,
): Promise<{ profile: IdentityProfile; updatedAt: string | null }> {
  const r = await db.maybeOne(sql.type(Row)`
    SELECT profile, to_json(updated_at)#>>'{}' AS updated_at FROM tenant_identity WHERE tenant_id = ${tenantId}`);
  const parsed = r ? IdentityProfile.safeParse(r.profile) : undefined;
  return parsed?.success
    ? { profile: parsed.data, updatedAt: r!.updated_at }
    : { profile: DEFAULT_IDENTITY, updatedAt: null };
}

export async function putIdentity(db: Db, tenantId: string, profile: IdentityProfile): Promise<{ updatedAt: string }> {
  const updatedAt = await db.oneFirst(sql.type(z.object({ updated_at: z.string() }))`
    INSERT INTO tenant_identity (tenant_id, profile) VALUES (${tenantId}, ${sql.jsonb(profile as never)})
    ON CONFLICT (tenant_id) DO UPDATE SET profile = EXCLUDED.profile, updated_at = now()
    RETURNING to_json(updated_at)#>>'{}' AS updated_at`);
  return { updatedAt };
}
