/**
 * Base64 a client sent (bare, or a `data:` URL; whitespace ignored) as bytes: 'invalid' when it is not base64,
 * 'tooLarge' when it would decode to more than `maxBytes` (checked before decoding anything).
 */
export function decodeBase64(text: string, maxBytes: number): Buffer | 'invalid' | 'tooLarge' {
  const data = text.replace(/^data:[^,]{0,100},/, '').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(data) || data.length % 4 === 1) return 'invalid';
  if (Math.floor((data.length * 3) / 4) > maxBytes + 2) return 'tooLarge';
  return Buffer.from(data, 'base64');
}
