import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { serviceKey } from './service-keys';

/** Text sealed by the service: opened only with the same key and the same associated data. */
export interface Seal {
  seal(text: string): string;
  /** The text, or null when `sealed` is not one this seal made (another key, other associated data, altered). */
  open(sealed: string): string | null;
}

/**
 * A seal under the service key `key` (made on first use, shared by every replica: `service_keys`): AES-256-GCM with a
 * random 96-bit IV and a 128-bit tag, `aad` as associated data (bind it to its tenant), written `<prefix><base64url>`.
 */
export async function sealWith(db: DatabasePool, key: string, aad: string, prefix: string): Promise<Seal> {
  const k = await serviceKey(db, key);
  const data = Buffer.from(aad);
  return {
    seal(text) {
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', k, iv).setAAD(data);
      const body = Buffer.concat([c.update(text, 'utf8'), c.final()]);
      return prefix + Buffer.concat([iv, c.getAuthTag(), body]).toString('base64url');
    },
    open(sealed) {
      if (!sealed.startsWith(prefix)) return null;
      const raw = Buffer.from(sealed.slice(prefix.length), 'base64url');
      if (raw.length < 28) return null;
      try {
        const d = createDecipheriv('aes-256-gcm', k, raw.subarray(0, 12)).setAAD(data);
        d.setAuthTag(raw.subarray(12, 28));
        return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
      } catch {
        return null;
      }
    },
  };
}
