import { zipSync } from 'fflate';
import { extractText as pdfText, getDocumentProxy, getMeta } from 'unpdf';
import { AppError } from '../../schema/errors';
import { readableText } from '../../schema/storable';
import type { SupportedMediaType } from '../../schema/knowledge';
import { lazyModule } from '../lazy-module';
import { extractFileInProcess } from '../web/extract-pool';
import { extractHtml } from './html';
import { decodeText } from './sniff';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on the first DOCX (see lazyModule)
const yauzl = lazyModule(() => require('yauzl') as typeof import('yauzl'));

// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on the first DOCX (see lazyModule)
const mammoth = lazyModule(() => require('mammoth') as typeof import('mammoth'));

export interface Extracted {
  title?: string;
  text: string;
}

function unreadable(kind: string, err: unknown): AppError {
  const reason = (err as Error)?.message?.split('\n')[0]?.slice(0, 200) ?? 'unknown error';
  return new AppError('invalid_request', `The ${kind} could not be read: ${reason}`, { cause: err });
}

/** PDF text by unpdf (pdf.js); run in the file-reading processes (`extract-process.ts`). */
export async function readPdf(buf: Uint8Array): Promise<Extracted> {
  let pdf;
  try {
    pdf = await getDocumentProxy(new Uint8Array(buf), { verbosity: 0 });
  } catch (err) {
    throw unreadable('PDF', err);
  }
  try {
    const { text } = await pdfText(pdf, { mergePages: false });
    const meta = await getMeta(pdf).catch(() => ({ info: {} as Record<string, unknown> }));
    const title = typeof meta.info?.Title === 'string' && meta.info.Title.trim() ? meta.info.Title.trim() : undefined;
    return {
      title,
      text: (text as string[])
        .map((p) => p.trim())
        .filter(Boolean)
        .join('\n\n'),
    };
  } catch (err) {
    throw unreadable('PDF', err);
  } finally {
    await pdf.destroy().catch(() => {});
  }
}

/**
 * DOCX text by mammoth; run in the file-reading processes (`extract-process.ts`). Mammoth (JSZip) inflates a part
 * whole before it compares the result with the size the zip declares, so a zip that declares small sizes and holds
 * gigabytes (2 GB in a 2 MB file: 2.2 GB of memory, 9 s) is read here first (`boundedDocx`), and mammoth is given
 * a stored (uncompressed) zip of the parts as read.
 */
export async function readDocx(buf: Uint8Array): Promise<Extracted> {
  const parts = await boundedDocx(buf);
  try {
    const { value } = await mammoth().extractRawText({ buffer: Buffer.from(zipSync(parts, { level: 0 })) });
    return { text: value };
  } catch (err) {
    throw unreadable('DOCX document', err);
  }
}

/**
 * The XML a DOCX may hold, as its zip directory declares it. Mammoth holds ~30× the XML in heap: 12 MB
 * (~9 M characters of text) reads in ~4 s and ~400 MB, while 400 MB of XML (a 1.4 MB file) filled the
 * process's 4 GB heap and crashed it.
 */
const DOCX_MAX_XML_BYTES = 12 * 1024 * 1024;
const MB = 1024 * 1024;

/**
 * Every part of a DOCX, inflated. Caps on the declared sizes, checked before any part is inflated: parts named
 * `.xml` or `.rels` at most DOCX_MAX_XML_BYTES; all parts together at most the file's own size plus
 * DOCX_MAX_XML_BYTES (pictures are stored compressed and barely expand, and a part of another name can still be
 * read as XML through the document's relationships). yauzl then fails a part that inflates past its declared size,
 * as soon as it does.
 * @throws AppError payload_too_large past a cap, invalid_request when the zip does not read or lies about a size
 */
async function boundedDocx(buf: Uint8Array): Promise<Record<string, Uint8Array>> {
  try {
    const zip = await yauzl().fromBufferPromise(Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength), {
      lazyEntries: true,
    });
    const entries: import('yauzl').Entry[] = [];
    let xml = 0;
    let all = 0;
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName.endsWith('/')) continue;
      entries.push(entry);
      all += entry.uncompressedSize;
      if (/\.(xml|rels)$/i.test(entry.fileName)) xml += entry.uncompressedSize;
    }
    if (xml > DOCX_MAX_XML_BYTES)
      throw new AppError(
        'payload_too_large',
        `The DOCX document expands to ${Math.ceil(xml / MB)} MB of XML; at most ${DOCX_MAX_XML_BYTES / MB} MB is read.`,
      );
    const cap = buf.byteLength + DOCX_MAX_XML_BYTES;
    if (all > cap)
      throw new AppError(
        'payload_too_large',
        `The DOCX document expands to ${Math.ceil(all / MB)} MB; at most ${Math.floor(cap / MB)} MB (the file's size plus ${DOCX_MAX_XML_BYTES / MB} MB) is read.`,
      );
    const parts: Record<string, Uint8Array> = {};
    for (const entry of entries) {
      const chunks: Buffer[] = [];
      try {
        for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
      } catch (err) {
        throw unreadable('DOCX document', new Error(`part ${entry.fileName}: ${(err as Error).message}`));
      }
      parts[entry.fileName] = Buffer.concat(chunks);
    }
    return parts;
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw unreadable('DOCX document', err);
  }
}

function firstHeading(markdown: string): string | undefined {
  return /^#{1,3}\s+(.+?)\s*#*\s*$/m.exec(markdown)?.[1]?.trim() || undefined;
}

/**
 * Extracted plain text (and a title when the document carries one) by maintained parsers:
 * unpdf (pdf.js) for PDF, mammoth for DOCX, Readability + linkedom for HTML.
 * @throws AppError invalid_request when the file cannot be parsed or holds no text
 */
export async function extractDocument(
  buf: Uint8Array,
  mediaType: SupportedMediaType,
  url?: string,
): Promise<Extracted> {
  let out: Extracted;
  if (mediaType === 'application/pdf') out = await extractFileInProcess('pdf', buf);
  else if (mediaType === 'application/vnd.openxmlformats-officedocument.wordprocessingml.document') {
    out = await extractFileInProcess('docx', buf);
  } else {
    const text = decodeText(buf);
    if (text === null) throw new AppError('unsupported_media_type', 'The file is not text.');
    if (mediaType === 'text/html') out = await extractHtml(text, url);
    else out = { title: mediaType === 'text/markdown' ? firstHeading(text) : undefined, text };
  }
  // The file's own text and metadata (a PDF title can hold NUL): what PostgreSQL cannot store is dropped or replaced.
  const text = readableText(out.text).trim();
  if (!text)
    throw new AppError(
      'invalid_request',
      'No text could be extracted from the document (scanned pages need OCR, which is not offered).',
    );
  const title = out.title === undefined ? undefined : readableText(out.title).replace(/\s+/g, ' ').slice(0, 300);
  return { title, text };
}
