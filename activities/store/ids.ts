import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** Random base32 text of `n` characters (5 bits each, from the CSPRNG). */
export function randomToken(n: number): string {
  const bytes = randomBytes(n);
  let out = '';
  for (let i = 0; i < n; i++) out += ALPHABET[bytes[i] & 31];
  return out;
}

/** Prefixed opaque id, e.g. `ten_4f9k2m...`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomToken(20)}`;
}
