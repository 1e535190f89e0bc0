import { sql } from 'slonik';
import { z } from 'zod';
import type { Db } from './db';
import { newId } from './ids';

/** A vision result kept as a memory fragment: provenance `seen`, with the hash of the image it describes. */
export async function addSeenMemory(
  db: Db,
  m: { tenantId: string; content: string; imageSha256: string },
): Promise<string> {
  return db.oneFirst(sql.type(z.object({ id: z.string() }))`
    INSERT INTO memories (id, tenant_id, kind, provenance, content, image_sha256)
    VALUES (${newId('mem')}, ${m.tenantId}, 'vision', 'seen', ${m.content}, ${m.imageSha256})
    RETURNING id`);
}
