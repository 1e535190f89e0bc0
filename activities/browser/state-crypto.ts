import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

// Saved browser states and checkpoints hold cookies and tokens: with SVC_STATE_KEY set they are
// sealed with AES-256-GCM (random 96-bit IV, 128-bit tag) before they reach the database.
const PREFIX = 'gcm1:';

function derive(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'svc-browser-state', 'aes-256-gcm', 32));
}

export interface StateCipher {
  encrypted: boolean;
  seal(plain: string): string;
  open(stored: string): string;
}

/** A cipher for the configured key; without a key, text is stored as is (and the docs say so). */
export function stateCipher(secret: string | undefined): StateCipher {
  const key = secret ? derive(secret) : undefined;
  return {
    encrypted: key !== undefined,
    seal(plain) {
      if (!key) return plain;
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
      return PREFIX + Buffer.concat([iv, c.getAuthTag(), body]).toString('base64');
    },
    /** @throws Error when the text is sealed and no (or another) key is configured */
    open(stored) {
      if (!stored.startsWith(PREFIX)) return stored;
      if (!key) throw new Error('This state is encrypted and SVC_STATE_KEY is not set.');
      const raw = Buffer.from(stored.slice(PREFIX.length), 'base64');
      const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      d.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
    },
  };
}
