import { hash, timingSafeEqual } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import type { KeyKind } from '../../schema/auth';
import type { Db } from './db';
import { newId, randomToken } from './ids';

/** The identity behind a request's bearer key. */
export interface KeyPrincipal {
  keyId: string;
  tenantId: string;
  kind: KeyKind;
  scopes: string[];
  app: string | null;
}

const KeyRow = z.object({
  id: z.string(),
  tenant_id: z.string(),
  kind: z.enum(['runtime', 'legacy', 'bootstrap']),
  secret_hash: z.string(),
  scopes: z.array(z.string()),
  app: z.string().nullable(),
  revoked_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
});

const KeyListRow = z.object({
  key_id: z.string(),
  tenant_id: z.string(),
  kind: z.string(),
  prefix: z.string().nullable(),
  scopes: z.array(z.string()),
  name: z.string().nullable(),
  app: z.string().nullable(),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
});
export type KeyListRow = z.infer<typeof KeyListRow>;

/**
 * Key secrets carry 160 random bits, so a fast SHA-256 is the right hash (no stretching needed).
 * The one-shot `hash` (no Hash object) runs on every request's key-cache lookup.
 */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

const KEY_PATTERN = /^(svc|agb)\.([0-9a-z]{12})\.([0-9a-z]{32})$/;

/** Splits a bearer token into its parts; `null` when it has none of our formats. */
export function parseKeyToken(
  token: string,
): { kind: 'runtime' | 'bootstrap'; prefix: string; secret: string } | { kind: 'legacy' } | null {
  const m = KEY_PATTERN.exec(token);
  if (m) return { kind: m[1] === 'svc' ? 'runtime' : 'bootstrap', prefix: m[2], secret: m[3] };
  if (/^legacy\.[A-Za-z0-9._~-]{8,200}$/.test(token)) return { kind: 'legacy' };
  return null;
}

/** @throws when the tenant id is taken (unique violation) */
export async function createTenant(db: Db, opts: { id?: string; name?: string } = {}): Promise<string> {
  const id = opts.id ?? newId('ten');
  await db.query(sql.unsafe`INSERT INTO tenants (id, name) VALUES (${id}, ${opts.name ?? null})`);
  return id;
}

export async function tenantExists(db: Db, tenantId: string): Promise<boolean> {
  return db.exists(sql.unsafe`SELECT 1 FROM tenants WHERE id = ${tenantId}`);
}

/** Mints a key and returns it in clear once; only the secret's hash is stored. */
export async function mintKey(
  db: Db,
  opts: { tenantId: string; kind: KeyKind; scopes: string[]; name?: string; app?: string; deviceId?: string },
): Promise<{ apiKey: string; keyId: string; tenantId: string; scopes: string[] }> {
  const keyId = newId('key');
  let apiKey: string;
  let prefix: string | null;
  let secretHash: string;
  if (opts.kind === 'legacy') {
    apiKey = `legacy.${randomToken(40)}`;
    prefix = null;
    secretHash = hashSecret(apiKey);
  } else {
    prefix = randomToken(12);
    const secret = randomToken(32);
    apiKey = `${opts.kind === 'runtime' ? 'svc' : 'agb'}.${prefix}.${secret}`;
    secretHash = hashSecret(secret);
  }
  const scopes = [...new Set(opts.scopes)];
  await db.query(sql.unsafe`
    INSERT INTO api_keys (id, tenant_id, kind, prefix, secret_hash, scopes, name, app, device_id)
    VALUES (${keyId}, ${opts.tenantId}, ${opts.kind}, ${prefix}, ${secretHash},
            ${sql.array(scopes, 'text')}, ${opts.name ?? null}, ${opts.app ?? null}, ${opts.deviceId ?? null})`);
  return { apiKey, keyId, tenantId: opts.tenantId, scopes };
}

/**
 * Resolves a bearer token to its principal, or `null` for unknown, malformed or revoked keys.
 * Records `last_used_at` at most once a minute per key.
 */
export async function authenticateKey(db: Db, token: string): Promise<KeyPrincipal | null> {
  const parsed = parseKeyToken(token);
  if (!parsed) return null;
  const row =
    parsed.kind === 'legacy'
      ? await db.maybeOne(sql.type(KeyRow)`
          SELECT id, tenant_id, kind, secret_hash, scopes, app, revoked_at, last_used_at FROM api_keys
          WHERE kind = 'legacy' AND secret_hash = ${hashSecret(token)}`)
      : await db.maybeOne(sql.type(KeyRow)`
          SELECT id, tenant_id, kind, secret_hash, scopes, app, revoked_at, last_used_at FROM api_keys
          WHERE prefix = ${parsed.prefix} AND kind = ${parsed.kind}`);
  if (!row || row.revoked_at) return null;
  if (parsed.kind !== 'legacy') {
    const expected = Buffer.from(row.secret_hash, 'hex');
    const actual = Buffer.from(hashSecret(parsed.secret), 'hex');
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return null;
  }
  // Only a stale mark costs a write: the hot path stays one read per request.
  if (!row.last_used_at || Date.parse(row.last_used_at) < Date.now() - 60_000) {
    await db.query(sql.unsafe`
      UPDATE api_keys SET last_used_at = now()
      WHERE id = ${row.id} AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`);
  }
  return { keyId: row.id, tenantId: row.tenant_id, kind: row.kind, scopes: row.scopes, app: row.app };
}

/** @returns false when no such key exists */
export async function revokeKey(db: Db, keyId: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = ${keyId}`);
  return r.rowCount > 0;
}

/** Lists keys without secrets or hashes. */
export async function listKeys(db: Db, opts: { tenantId?: string } = {}): Promise<readonly KeyListRow[]> {
  const where = opts.tenantId ? sql.fragment`WHERE tenant_id = ${opts.tenantId}` : sql.fragment``;
  return db.any(sql.type(KeyListRow)`
    SELECT id AS key_id, tenant_id, kind, prefix, scopes, name, app, created_at, revoked_at, last_used_at
    FROM api_keys ${where} ORDER BY created_at, id`);
}

/** Marks a key used now (at most once a minute); the gateway calls it for cached keys without waiting. */
export async function markKeyUsed(db: Db, keyId: string): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE api_keys SET last_used_at = now()
    WHERE id = ${keyId} AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`);
}

/**
 * Of these key ids, the ones still unrevoked and holding `scope`: one read for any number of keys (the live
 * socket re-checks the keys of its open connections with it).
 */
export async function keysHoldingScope(db: Db, keyIds: readonly string[], scope: string): Promise<Set<string>> {
  if (keyIds.length === 0) return new Set();
  const rows = await db.anyFirst(sql.type(z.object({ id: z.string() }))`
    SELECT id FROM api_keys
    WHERE id = ANY(${sql.array([...keyIds], 'text')}) AND revoked_at IS NULL AND ${scope} = ANY(scopes)`);
  return new Set(rows);
}
