import { fileTypeFromBuffer } from 'file-type';
import { AppError } from '../../schema/errors';
import type { SupportedMediaType } from '../../schema/knowledge';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/**
 * Decodes text bytes (UTF-8, or UTF-16 with a BOM); null when the bytes are not text. `head`: the bytes are the start
 * of a longer file (a character cut at their end is not a reason to say they are not text).
 */
export function decodeText(buf: Uint8Array, head = false): string | null {
  if (buf.length >= 2 && buf[0] === 0xff && buf[1] === 0xfe) return new TextDecoder('utf-16le').decode(buf.subarray(2));
  if (buf.length >= 2 && buf[0] === 0xfe && buf[1] === 0xff) return new TextDecoder('utf-16be').decode(buf.subarray(2));
  if (buf.subarray(0, 8192).includes(0)) return null;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(buf, { stream: head });
  } catch {
    return null;
  }
  const sample = text.slice(0, 8192);
  // eslint-disable-next-line no-control-regex
  const controls = sample.match(/[\u0000-\u0008\u000e-\u001f\u007f]/g)?.length ?? 0;
  return controls > sample.length / 100 ? null : text;
}

export function looksLikeHtml(text: string): boolean {
  const head = text.slice(0, 4096).trimStart();
  if (/^(<\?xml[^>]*>\s*)?<!doctype html/i.test(head) || /^<(html|head|body)[\s>]/i.test(head)) return true;
  if (!head.startsWith('<')) return false;
  return (
    (head.match(/<(p|div|h[1-6]|a|span|ul|ol|li|table|br|article|section|main|title)\b[^>]*>/gi)?.length ?? 0) >= 2
  );
}

export function looksLikeMarkdown(text: string): boolean {
  const sample = text.slice(0, 16384);
  const signals = [
    /^#{1,6}\s+\S/m,
    /^\s*[-*+]\s+\S/m,
    /^\s*\d+\.\s+\S/m,
    /^```/m,
    /\[[^\]\n]+\]\([^)\s]+\)/,
    /^>\s+\S/m,
    /(\*\*|__)[^*_\n]+(\*\*|__)/,
    /^\|.+\|\s*$/m,
  ].filter((re) => re.test(sample)).length;
  return /^#{1,6}\s+\S/m.test(sample) ? signals >= 1 : signals >= 2;
}

/**
 * Detects the media type from the bytes: binary formats by signature (file-type), then a
 * text/HTML/markdown sniff. The file name and the declared content type are never trusted.
 * @throws AppError unsupported_media_type (415)
 */
export async function detectMediaType(buf: Uint8Array): Promise<SupportedMediaType> {
  if (buf.length === 0) throw new AppError('invalid_request', 'The file is empty.');
  const found = await fileTypeFromBuffer(buf);
  if (found) {
    if (found.mime === 'application/pdf') return 'application/pdf';
    if (found.mime === DOCX) return DOCX;
    if (found.mime !== 'application/xml') {
      throw new AppError(
        'unsupported_media_type',
        `Unsupported document type ${found.mime}: send text, markdown, HTML, PDF or DOCX.`,
      );
    }
  }
  const text = decodeText(buf);
  if (text === null)
    throw new AppError('unsupported_media_type', 'Unsupported binary content: send text, markdown, HTML, PDF or DOCX.');
  if (looksLikeHtml(text)) return 'text/html';
  if (found)
    throw new AppError(
      'unsupported_media_type',
      'Unsupported document type application/xml: send text, markdown, HTML, PDF or DOCX.',
    );
  return looksLikeMarkdown(text) ? 'text/markdown' : 'text/plain';
}
