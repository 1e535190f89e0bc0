import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import { createDb } from '../../activities/store/db';
import { createTenant, mintKey, authenticateKey } from '../../activities/store/keys';
import { ConfigError, parseConfig } from '../../schema/config';
import { pgliteUrlFile, prepareDatabase } from '../../workers/database';
import { runKeysCli } from '../../workers/keys-command';
import { freePort } from '../../workers/temporal-dev';
import { captureCli } from '../helpers/cli';

const log = pino({ level: 'silent' });

/** Config as with no DATABASE_URL set, but whose default address nobody answers. */
async function deadDefaultConfig(dir: string) {
  const dead = await freePort();
  const config = { ...parseConfig({ SVC_DATA_DIR: dir }), databaseUrl: `postgres://postgres@127.0.0.1:${dead}/svc` };
  expect(config.databaseUrlExplicit).toBe(false);
  return config;
}

test('with no PostgreSQL answering and no DATABASE_URL given, npm start migrates and uses an embedded PGlite, published for the operator CLIs', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-pglite-'));
  try {
    const config = await deadDefaultConfig(dir);
    const database = await prepareDatabase(config, log, { embeddedFallback: true });
    try {
      expect(database.embedded).toBe(true);
      expect(database.maxConnections).toBe(1);
      expect(readFileSync(pgliteUrlFile(dir), 'utf8').trim()).toBe(database.url);
      const db = await createDb({ url: database.url, maxConnections: database.maxConnections });
      try {
        // The same migrations ran: keys work end to end on the embedded database.
        const tenant = await createTenant(db);
        const key = await mintKey(db, { tenantId: tenant, kind: 'runtime', scopes: ['runtime:chat'] });
        expect((await authenticateKey(db, key.apiKey))?.tenantId).toBe(tenant);
        const applied = await db.anyFirst(
          sql.type(z.object({ name: z.string() }))`SELECT name FROM schema_migrations ORDER BY name`,
        );
        expect(applied[0]).toBe('0001_foundation.sql');

        // The keys CLI (no DATABASE_URL, same SVC_DATA_DIR) works on the running service's PGlite.
        const created = await captureCli(runKeysCli, ['create', '--scopes', 'runtime:chat', '--tenant', tenant], {
          SVC_DATA_DIR: dir,
        });
        expect({ code: created.code, err: created.err }).toEqual({ code: 0, err: '' });
        expect((await authenticateKey(db, created.out.api_key))?.tenantId).toBe(tenant);

        // A second npm start on the same data dir is refused instead of opening the PGlite twice.
        await expect(prepareDatabase(config, log, { embeddedFallback: true })).rejects.toThrow(
          /Another process already serves the embedded PGlite/,
        );
      } finally {
        await db.end();
      }
    } finally {
      await database.stop();
    }
    expect(existsSync(pgliteUrlFile(dir))).toBe(false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the API and worker entries never fall back to PGlite: no server answering stops them with a clear message', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-pglite-'));
  try {
    const config = await deadDefaultConfig(dir);
    const refused = prepareDatabase(config, log, { embeddedFallback: false });
    await expect(refused).rejects.toThrow(ConfigError);
    await expect(refused).rejects.toThrow(
      /No PostgreSQL answers at 127\.0\.0\.1:\d+ \(ECONNREFUSED\).*set DATABASE_URL.*only for npm start/,
    );
    expect(existsSync(path.join(dir, 'pglite'))).toBe(false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an explicit DATABASE_URL that does not answer stops start-up (no silent fallback)', async () => {
  const dead = await freePort();
  const config = parseConfig({ DATABASE_URL: `postgres://postgres@127.0.0.1:${dead}/svc`, SVC_DATA_DIR: os.tmpdir() });
  await expect(prepareDatabase(config, log, { embeddedFallback: true })).rejects.toThrow(/ECONNREFUSED|connect/);
});
