import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import { createDb } from '../../activities/store/db';
import { createTenant, mintKey, authenticateKey } from '../../activities/store/keys';
import { parseConfig } from '../../schema/config';
import { prepareDatabase } from '../../workers/database';
import { freePort } from '../../workers/temporal-dev';

const log = pino({ level: 'silent' });

test('with no PostgreSQL answering and no DATABASE_URL given, an embedded PGlite is migrated and used', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-pglite-'));
  try {
    const dead = await freePort();
    const config = { ...parseConfig({ SVC_DATA_DIR: dir }), databaseUrl: `postgres://postgres@127.0.0.1:${dead}/svc` };
    expect(config.databaseUrlExplicit).toBe(false);
    const database = await prepareDatabase(config, log);
    try {
      expect(database.embedded).toBe(true);
      expect(database.maxConnections).toBe(1);
      const db = await createDb({ url: database.url, maxConnections: database.maxConnections });
      try {
        // The same migrations ran: keys work end to end on the embedded database.
        const tenant = await createTenant(db);
        const key = await mintKey(db, { tenantId: tenant, kind: 'runtime', scopes: ['runtime:chat'] });
        expect((await authenticateKey(db, key.apiKey))?.tenantId).toBe(tenant);
        const applied = await db.anyFirst(sql.type(z.object({ name: z.string() }))`SELECT name FROM schema_migrations ORDER BY name`);
        expect(applied[0]).toBe('0001_foundation.sql');
      } finally {
        await db.end();
      }
    } finally {
      await database.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an explicit DATABASE_URL that does not answer stops start-up (no silent fallback)', async () => {
  const dead = await freePort();
  const config = parseConfig({ DATABASE_URL: `postgres://postgres@127.0.0.1:${dead}/svc`, SVC_DATA_DIR: os.tmpdir() });
  await expect(prepareDatabase(config, log)).rejects.toThrow(/ECONNREFUSED|connect/);
});
