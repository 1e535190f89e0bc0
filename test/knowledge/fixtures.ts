import { Document, HeadingLevel, Packer, Paragraph, TextRun } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import zlib from 'node:zlib';
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

/**
 * A one-page PDF whose content stream shows `text` and then holds `padding` bytes of spaces, Flate-compressed
 * (~1 KB a MB): pdf.js inflates a content stream whole before it reads it.
 */
export async function paddedPdf(text: string, padding: number): Promise<Buffer> {
  const spaces = Buffer.alloc(16 * 1024 * 1024, 0x20);
  const deflate = zlib.createDeflate({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (c: Buffer) => out.push(c));
  const ended = new Promise((resolve, reject) => deflate.on('end', resolve).on('error', reject));
  deflate.write(Buffer.from(`BT /F1 12 Tf 50 700 Td (${text}) Tj ET\n`));
  for (let left = padding; left > 0; left -= spaces.length)
    if (!deflate.write(left >= spaces.length ? spaces : spaces.subarray(0, left)))
      await new Promise((r) => deflate.once('drain', r));
  deflate.end();
  await ended;
  const stream = Buffer.concat(out);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    null,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  const offsets: number[] = [];
  let length = parts[0].length;
  objects.forEach((o, i) => {
    offsets.push(length);
    const part =
      o === null
        ? Buffer.concat([
            Buffer.from(`${i + 1} 0 obj\n<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`),
            stream,
            Buffer.from('\nendstream\nendobj\n'),
          ])
        : Buffer.from(`${i + 1} 0 obj\n${o}\nendobj\n`);
    parts.push(part);
    length += part.length;
  });
  const xref = offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('');
  parts.push(
    Buffer.from(
      `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`,
    ),
  );
  return Buffer.concat(parts);
}
