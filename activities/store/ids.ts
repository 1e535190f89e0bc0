import { createHash, randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function base32(bytes: Uint8Array, n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += ALPHABET[bytes[i] & 31];
  return out;
}

// CSPRNG bytes drawn 4 KiB at a time and each used once: a request id no longer costs a
// randomBytes call (its buffer, and a trip into the crypto binding) per token.
const pool = Buffer.alloc(4096);
let used = pool.length;

/** Random base32 text of `n` characters (5 bits each, from the CSPRNG). */
export function randomToken(n: number): string {
  if (n > pool.length) return base32(randomFillSync(Buffer.alloc(n)), n);
  if (used + n > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const at = used;
  used += n;
  let out = '';
  for (let i = at; i < at + n; i++) out += ALPHABET[pool[i] & 31];
  return out;
}

/** Prefixed opaque id, e.g. `ten_4f9k2m...`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomToken(20)}`;
}

/**
 * The id `newId(prefix)` would have drawn, derived instead from `seed` (sha256): same shape, and the
 * same seed always gives the same id. Used for jobs created under an Idempotency-Key (api/idempotency.ts).
 */
export function derivedId(prefix: string, seed: string): string {
  return `${prefix}_${base32(createHash('sha256').update(`${prefix}\0${seed}`).digest(), 20)}`;
}
