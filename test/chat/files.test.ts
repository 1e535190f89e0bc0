import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import { fields, type Harness } from '../helpers/harness';
import { makeDocx, makePdf } from '../knowledge/fixtures';

/** Documents in chat messages: OpenAI's `file` parts on chat completions, `input_file` parts on responses. */
let h: Harness;
let fake: FakeOpenAI;
let key: string;

withFakeUpstream(
  {
    scopes: ['runtime:chat'],
    env: { SVC_UPLOAD_LIMIT: '200000', SVC_ALLOW_PRIVATE_FETCH: 'true' },
    resetEach: { reply: 'Read it.' },
  },
  (up) => ({ fake, h, key } = up),
);

let files: http.Server;
let filesUrl = '';
let pdf: Buffer;
beforeAll(async () => {
  pdf = await makePdf([['Quarterly revenue grew by eleven percent.'], ['Costs fell in the north region.']], 'Q3');
  files = http.createServer((req, res) => {
    if (req.url === '/q3.pdf') return res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf);
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', () => r()));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => files.close(() => r())));

const chat = (content: unknown[], extra: Record<string, unknown> = {}) =>
  h.req('POST', '/v1/chat/completions', {
    key,
    body: { model: 'svc-oracle', messages: [{ role: 'user', content }], ...extra },
  });
const lastUser = () => fake.chats.at(-1)!.body.messages.at(-1);
const dataUrl = (mime: string, b: Buffer) => `data:${mime};base64,${b.toString('base64')}`;

describe('file parts on /v1/chat/completions', () => {
  test('a PDF (data URL) and a DOCX (bare base64) reach the lane as their text, in one string with the question', async () => {
    const docx = await makeDocx('Plan', ['Hire two engineers in March.']);
    const r = await chat([
      { type: 'text', text: 'Summarise these.' },
      { type: 'file', file: { filename: 'q3.pdf', file_data: dataUrl('application/pdf', pdf) } },
      { type: 'file', file: { filename: 'plan.docx', file_data: docx.toString('base64') } },
    ]);
    expect(r.status).toBe(200);
    const content = lastUser().content as string;
    expect(typeof content).toBe('string');
    expect(content.startsWith('Summarise these.\nFile "q3.pdf":\n\n')).toBe(true);
    expect(content).toContain('Quarterly revenue grew by eleven percent.');
    expect(content).toContain('Costs fell in the north region.');
    expect(content).toContain('File "plan.docx":\n\n');
    expect(content).toContain('Hire two engineers in March.');
  });

  test('a file beside an image keeps the parts: the file as a text part', async () => {
    const md = Buffer.from('# Notes\n\n- buy milk\n- call Ana\n');
    const png =
      'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const r = await chat([
      { type: 'file', file: { filename: 'notes.md', file_data: md.toString('base64') } },
      { type: 'image_url', image_url: { url: png } },
    ]);
    expect(r.status).toBe(200);
    const parts = lastUser().content as Array<{ type: string; text?: string }>;
    expect(parts.map((p) => p.type)).toEqual(['text', 'image_url']);
    expect(parts[0].text).toBe('File "notes.md":\n\n# Notes\n\n- buy milk\n- call Ana');
  });

  test.each([
    [
      'a malformed file id',
      [{ type: 'file', file: { file_id: 'abc' } }],
      400,
      'body.messages.0.content.0.file.file_id',
    ],
    ['an unknown file id', [{ type: 'file', file: { file_id: 'file-abc' } }], 404, 'body.messages.0.content.0.file'],
    ['no file_data', [{ type: 'file', file: { filename: 'x.pdf' } }], 400, 'body.messages.0.content.0.file.file_data'],
    [
      'not base64',
      [
        { type: 'text', text: 'x' },
        { type: 'file', file: { file_data: 'abc$%^' } },
      ],
      400,
      'body.messages.0.content.1.file.file_data',
    ],
    [
      'bytes that are no document',
      [
        {
          type: 'file',
          file: { file_data: Buffer.from([0x50, 0x4b, 3, 4, 0, 1, 2, 0, 0xff, 0xfe, 0, 0]).toString('base64') },
        },
      ],
      415,
      'body.messages.0.content.0.file',
    ],
    [
      'a file over SVC_UPLOAD_LIMIT',
      [{ type: 'file', file: { file_data: Buffer.alloc(210_000, 97).toString('base64') } }],
      413,
      'body.messages.0.content.0.file',
    ],
  ])('%s is refused naming the part, before any model call', async (_name, content, status, path) => {
    const r = await chat(content);
    expect(r.status).toBe(status);
    expect(fields(r)).toContain(path);
    expect(fake.chats.length).toBe(0);
  });

  test('files only on user messages, at most eight a request', async () => {
    const part = { type: 'file', file: { file_data: Buffer.from('hello').toString('base64') } };
    const onAssistant = await h.req('POST', '/v1/chat/completions', {
      key,
      body: {
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: [part] },
          { role: 'user', content: 'y' },
        ],
      },
    });
    expect(onAssistant.status).toBe(400);
    expect(fields(onAssistant)).toEqual(['body.messages.1.content']);
    const nine = await chat(Array.from({ length: 9 }, () => part));
    expect(nine.status).toBe(400);
    expect(nine.body.error).toMatch(/at most 8 files/);
    expect(fake.chats.length).toBe(0);
  });
});

describe('input_file parts on /v1/responses', () => {
  test('file_data and file_url are read; the stored input keeps the text the model got', async () => {
    const r = await h.req('POST', '/v1/responses', {
      key,
      body: {
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'Compare.' },
              {
                type: 'input_file',
                filename: 'a.txt',
                file_data: Buffer.from('Alpha plan: ship in May.').toString('base64'),
              },
              { type: 'input_file', file_url: `${filesUrl}/q3.pdf` },
            ],
          },
        ],
      },
    });
    expect(r.status).toBe(200);
    const content = lastUser().content as string;
    expect(content).toContain('Compare.\nFile "a.txt":\n\nAlpha plan: ship in May.');
    expect(content).toContain('File:\n\nQuarterly revenue grew by eleven percent.');
    const items = await h.req('GET', `/v1/responses/${r.body.id}/input_items`, { key });
    const parts = items.body.data[0].content;
    expect(parts.map((p: { type: string }) => p.type)).toEqual(['input_text', 'input_text', 'input_text']);
    expect(parts[1].text).toBe('File "a.txt":\n\nAlpha plan: ship in May.');
    expect(JSON.stringify(items.body)).not.toContain('file_data');
  });

  test('a missing file_url is its fetch’s error naming the part; data and url together are 400', async () => {
    const missing = await h.req('POST', '/v1/responses', {
      key,
      body: { input: [{ role: 'user', content: [{ type: 'input_file', file_url: `${filesUrl}/nope.pdf` }] }] },
    });
    expect(missing.status).toBe(502);
    expect(fields(missing)).toEqual(['body.input.0.content.0']);
    const both = await h.req('POST', '/v1/responses', {
      key,
      body: {
        input: [{ role: 'user', content: [{ type: 'input_file', file_url: `${filesUrl}/q3.pdf`, file_data: 'aGk=' }] }],
      },
    });
    expect(both.status).toBe(400);
    expect(fields(both)).toEqual(['body.input.0.content.0']);
    expect(fake.chats.length).toBe(0);
  });
});
