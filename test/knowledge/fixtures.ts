import { Document, HeadingLevel, Packer, Paragraph, TextRun } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { strToU8, zipSync } from 'fflate';
import type { Harness } from '../helpers/harness';

/** A real PDF with a text layer (pdf-lib), one page per entry. */
export async function makePdf(pages: string[][], title?: string): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  if (title) pdf.setTitle(title);
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const page = pdf.addPage([595, 842]);
    lines.forEach((line, i) => page.drawText(line, { x: 50, y: 780 - i * 18, size: 12, font }));
  }
  return Buffer.from(await pdf.save());
}

/** A real DOCX (docx package) with a heading and paragraphs. */
export async function makeDocx(heading: string, paragraphs: string[]): Promise<Buffer> {
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: heading, heading: HeadingLevel.HEADING_1 }),
          ...paragraphs.map((p) => new Paragraph({ children: [new TextRun(p)] })),
        ],
      },
    ],
  });
  return Packer.toBuffer(doc);
}

/** POSTs a multipart form with `file` (and optional text fields) to the app. */
export async function upload(
  h: Harness,
  path: string,
  key: string,
  file: { bytes: Buffer | string; name?: string; type?: string } | null,
  fields: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const form = new FormData();
  if (file) {
    const bytes = typeof file.bytes === 'string' ? Buffer.from(file.bytes) : file.bytes;
    form.append(
      'file',
      new Blob([new Uint8Array(bytes)], { type: file.type ?? 'application/octet-stream' }),
      file.name ?? 'upload.bin',
    );
  }
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(`${h.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body };
}

/**
 * A minimal DOCX zipped by fflate (level 9) whose package relationship points at `main`; `xmlBytes` of paragraphs
 * (a few kB zipped per MB). `declare`, when given, overwrites the main part's uncompressed size in both its local
 * header and the zip directory: a zip that lies about what it holds.
 */
export function bulkyDocx(xmlBytes: number, main = 'word/document.xml', declare?: number): Buffer {
  const run = '<w:p><w:r><w:t>' + 'a'.repeat(80) + '</w:t></w:r></w:p>';
  const xml = `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${run.repeat(Math.ceil(xmlBytes / run.length))}</w:body></w:document>`;
  const zip = Buffer.from(
    zipSync(
      {
        '[Content_Types].xml': strToU8(
          `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/${main}" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
        ),
        '_rels/.rels': strToU8(
          `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="${main}"/></Relationships>`,
        ),
        [main]: strToU8(xml),
      },
      { level: 9 },
    ),
  );
  if (declare !== undefined) {
    const size = Buffer.byteLength(xml);
    let patched = 0;
    for (let at = 0; at < zip.length - 4; at++) {
      const sig = zip.readUInt32LE(at);
      // The local header's size field is at 22, the directory entry's at 24.
      const field = sig === 0x04034b50 ? at + 22 : sig === 0x02014b50 ? at + 24 : -1;
      if (field > 0 && zip.readUInt32LE(field) === size) {
        zip.writeUInt32LE(declare, field);
        patched++;
      }
    }
    if (patched !== 2) throw new Error(`bulkyDocx: patched ${patched} size fields, expected 2`);
  }
  return zip;
}
