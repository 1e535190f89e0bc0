import iconv from 'iconv-lite';
import { readableText } from '../../schema/storable';

/**
 * The character set of a text body, in the order browsers use (WHATWG "encoding sniffing", simplified):
 * a byte-order mark, the Content-Type `charset`, a `<meta charset>` / `http-equiv` in the first
 * 2 KB, else UTF-8 when the bytes are valid UTF-8, else windows-1252.
 */
export function detectCharset(body: Uint8Array, contentType: string): string {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  const declared = /charset\s*=\s*["']?([\w.:-]+)/i.exec(contentType)?.[1];
  if (declared && iconv.encodingExists(declared)) return declared.toLowerCase();
  const head = Buffer.from(body.subarray(0, 2048)).toString('latin1');
  const meta = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head)?.[1];
  if (meta && iconv.encodingExists(meta))
    return meta.toLowerCase() === 'iso-8859-1' ? 'windows-1252' : meta.toLowerCase();
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(body);
    return 'utf-8';
  } catch {
    return 'windows-1252';
  }
}

/**
 * Decodes a text body in its detected character set (BOM stripped). NULs are dropped (as a browser shows a page) and
 * unpaired UTF-16 surrogates (a UTF-16 body can hold them) become U+FFFD: pages end up in documents, runs and steps,
 * which PostgreSQL could not store otherwise.
 */
export function decodeBody(body: Uint8Array, contentType: string): { text: string; charset: string } {
  const charset = detectCharset(body, contentType);
  return { text: readableText(iconv.decode(Buffer.from(body), charset, { stripBOM: true })), charset };
}
