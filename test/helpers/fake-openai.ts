import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real local HTTP server speaking the OpenAI chat-completions protocol (JSON and SSE), for
 * tests of anything that calls a model lane. Point the app at it with
 * `startHarness({ env: { OPENAI_BASE_URL: fake.url } })`.
 *
 * Each chat request takes the next scripted behaviour (`fake.script(...)`), else the result of
 * `fake.onRequest(fn)`, else the default. Every request is recorded with its parsed body, and
 * the server tracks how many chat requests are in flight now and at most.
 */
export interface FakeBehavior {
  /** Reply text (default "Hello from the fake upstream."). */
  reply?: string;
  /** Reply with the prompt itself: one `role: content` line per message. */
  echo?: boolean;
  /** Wait this long before answering (headers included). */
  delayMs?: number;
  /** Answer only once this settles: the test decides when, instead of guessing a delay. */
  gate?: Promise<unknown>;
  /** Stream: wait this long between chunks. */
  chunkDelayMs?: number;
  /** Answer with this HTTP status and an OpenAI-style error body. */
  status?: number;
  /** With `status` (e.g. 429): the Retry-After header. */
  retryAfter?: string;
  /** Never answer; the request stays open until the client goes away. */
  hang?: boolean;
  /** Stream: send this many content chunks, then hang. */
  hangAfterChunks?: number;
  /** Stream: send this many content chunks, then destroy the connection. */
  dropAfterChunks?: number;
  /** Audio (speech, a streamed transcription): send everything but the last chunk or event, then wait for this. */
  holdLast?: Promise<unknown>;
  /** Ask for tool calls (finish_reason "tool_calls"); arguments are JSON-encoded unless strings. */
  toolCalls?: Array<{ name: string; arguments?: unknown; id?: string }>;
  /** `null` leaves usage out of the answer. */
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  finishReason?: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body (undefined when none or not JSON). */
  body: any;
  stream: boolean;
  at: number;
  /** True once the answer was completely sent. */
  finished: boolean;
  /** True when the client went away before the answer was complete (abort, disconnect). */
  closedEarly: boolean;
  /** Chat requests: when (Date.now()) the request's response closed, answered or not; unset while it is open. */
  closedAt?: number;
}

export interface FakeOpenAI {
  /** Base URL ending in /v1 (use as OPENAI_BASE_URL or a provider base_url). */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Chat requests only (POST .../chat/completions). */
  readonly chats: RecordedRequest[];
  /** Moderation requests only (POST .../moderations). */
  moderationRequests: RecordedRequest[];
  /** Embedding requests only (POST .../embeddings). */
  readonly embeddingRequests: RecordedRequest[];
  /** Audio requests only (POST .../audio/speech, .../audio/transcriptions, .../audio/translations). */
  readonly audioRequests: RecordedRequest[];
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** TCP connections accepted so far (keep-alive reuse shows as fewer connections than requests). */
  readonly connections: number;
  script(...behaviors: FakeBehavior[]): void;
  setDefault(behavior: FakeBehavior): void;
  onRequest(fn: ((req: RecordedRequest) => FakeBehavior | undefined) | undefined): void;
  /** Clears recorded requests, the script, the handler and the max-in-flight mark. */
  reset(): void;
  /** Polls (every 10 ms) until `pred` holds; rejects after `timeoutMs`. */
  waitFor(pred: () => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** A valid 1x1 PNG: the fake's generated image (`reply` replaces it with other base64). */
/** The user message of an agent run's request (after the system prompt): the run's query. */
export const userText = (r: RecordedRequest) => String(r.body?.messages?.[1]?.content ?? '');
/** The tool results an agent run's request carries: one per tool call answered so far. */
export const toolMsgs = (r: RecordedRequest) =>
  (r.body?.messages ?? []).filter((m: { role: string }) => m.role === 'tool') as Array<{ content: string }>;

export const FAKE_PNG_B64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pieces(text: string): string[] {
  return text.match(/\s*\S+\s*$|\s*\S+/g) ?? (text ? [text] : []);
}

function promptText(body: any): string {
  const msgs: Array<{ role?: string; content?: unknown }> = Array.isArray(body?.messages) ? body.messages : [];
  return msgs
    .map((m) => `${m.role}: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`)
    .join('\n');
}

/**
 * The fake's embedding of `text`: a hashed bag of words (each lower-cased word adds ±1 to one of
 * `dims` dimensions, FNV-1a), L2-normalised. Deterministic, and texts sharing words are close in
 * cosine, which is all retrieval tests need.
 */
export function fakeEmbedding(text: string, dims = 64): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    let h = 0x811c9dc5;
    for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 0x01000193) >>> 0;
    v[h % dims] += h & 0x80000000 ? -1 : 1;
  }
  const norm = Math.hypot(...v);
  if (!norm) return v.map((_, i) => (i === 0 ? 1 : 0));
  return v.map((x) => x / norm);
}

export interface FakeEmbeddingOptions {
  /** false: no /embeddings route (404), like a chat-only upstream. Default true. */
  enabled?: boolean;
  dims?: number;
  /** Send `data` in reverse order (still with correct `index`es), as the protocol allows. */
  reverse?: boolean;
  /** Answer every embeddings request with this HTTP status (and Retry-After: 7 on a 429). */
  status?: number;
  /** false: `dimensions` is ignored, as by a model that does not take it. */
  dimensions?: boolean;
}

/** OpenAI's moderation categories (the fake's results carry each). */
const MODERATION_CATEGORIES = [
  'hate',
  'hate/threatening',
  'harassment',
  'harassment/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
];

/** A WAV header: 16-bit mono PCM at `rate` Hz, `bytes` of samples. */
function wavHeader(bytes: number, rate: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + bytes, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(1, 22); // mono
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(bytes, 40);
  return h;
}

/** A real WAV file: a 440 Hz tone `seconds` long, 16-bit mono PCM at `rate` Hz (audio to transcribe in tests). */
export function makeWav(seconds: number, rate = 16_000): Buffer {
  const samples = Buffer.alloc(Math.round(seconds * rate) * 2);
  for (let i = 0; i < samples.length / 2; i++)
    samples.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / rate) * 8000), i * 2);
  return Buffer.concat([wavHeader(samples.length, rate), samples]);
}

/** The signature each speech format starts with (what a type sniffer reads it as); pcm has none. */
const AUDIO_MAGIC: Record<string, Buffer> = {
  mp3: Buffer.from([0xff, 0xfb, 0x90, 0x64]),
  aac: Buffer.from([0xff, 0xf1, 0x50, 0x80]),
  flac: Buffer.from('fLaC\x00\x00\x00\x22', 'latin1'),
  opus: Buffer.concat([
    Buffer.from('OggS\x00\x02', 'latin1'),
    Buffer.alloc(20),
    Buffer.from([1, 19]),
    Buffer.from('OpusHead'),
  ]),
  pcm: Buffer.alloc(0),
};
/** The content type OpenAI sends each speech format with. */
export const FAKE_SPEECH_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/**
 * The fake's speech for `input` in `format` (mp3 by default): the format's signature (a WAV header for wav), then
 * samples made from the text (at least 8 KiB). Deterministic: tests compare what they got with it.
 */
export function fakeSpeech(input: string, format = 'mp3'): Buffer {
  const text = Buffer.from(input || ' ');
  const samples = Buffer.alloc(Math.max(8192, text.length * 16));
  for (let i = 0; i < samples.length; i++) samples[i] = text[i % text.length];
  const head = format === 'wav' ? wavHeader(samples.length, 24_000) : (AUDIO_MAGIC[format] ?? AUDIO_MAGIC.mp3);
  return Buffer.concat([head, samples]);
}

/** `bytes` in `n` pieces of about the same size (the last takes what is left). */
function split(bytes: Buffer, n: number): Buffer[] {
  const size = Math.ceil(bytes.length / n);
  return Array.from({ length: n }, (_, i) => bytes.subarray(i * size, (i + 1) * size)).filter((b) => b.length);
}

/** A file of a multipart form as the fake records it. */
export interface FakeFormFile {
  field: string;
  name: string;
  type: string;
  size: number;
  bytes: Buffer;
}

/**
 * A multipart body read as the fake records it: the text fields (a field sent more than once as the list of its
 * values) and the files; undefined when it is not a form.
 */
async function readFakeForm(
  raw: Buffer,
  contentType: string,
): Promise<{ fields: Record<string, string | string[]>; files: FakeFormFile[] } | undefined> {
  const form = await new Response(raw, { headers: { 'content-type': contentType } }).formData().catch(() => undefined);
  if (!form) return undefined;
  const fields: Record<string, string | string[]> = {};
  const files: FakeFormFile[] = [];
  for (const [k, v] of form.entries())
    if (typeof v !== 'string')
      files.push({ field: k, name: v.name, type: v.type, size: v.size, bytes: Buffer.from(await v.arrayBuffer()) });
    else if (k in fields) fields[k] = [fields[k], v].flat();
    else fields[k] = v;
  return { fields, files };
}

/** A time in seconds as SubRip (`00:00:01,500`) or WebVTT (`00:00:01.500`) writes it. */
const clock = (s: number, mark: ',' | '.') =>
  `${new Date(s * 1000).toISOString().slice(11, 19)}${mark}${String(Math.round((s % 1) * 1000)).padStart(3, '0')}`;

export async function startFakeOpenAI(
  opts: { defaults?: FakeBehavior; models?: string[]; apiKey?: string; embeddings?: FakeEmbeddingOptions } = {},
): Promise<FakeOpenAI> {
  const requests: RecordedRequest[] = [];
  let queue: FakeBehavior[] = [];
  let handler: ((req: RecordedRequest) => FakeBehavior | undefined) | undefined;
  let defaults: FakeBehavior = opts.defaults ?? {};
  let inFlight = 0;
  let maxInFlight = 0;
  let seq = 0;

  async function chat(rec: RecordedRequest, b: FakeBehavior, res: http.ServerResponse, closed: () => boolean) {
    if (b.delayMs) await sleep(b.delayMs);
    if (b.gate) await b.gate;
    if (closed()) return;
    if (b.hang) return; // left open until the client goes away
    if (b.status && b.status >= 400) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (b.retryAfter) headers['retry-after'] = b.retryAfter;
      res
        .writeHead(b.status, headers)
        .end(JSON.stringify({ error: { message: `fake failure ${b.status}`, type: 'server_error' } }));
      return;
    }
    const id = `chatcmpl-fake${++seq}`;
    const created = Math.floor(Date.now() / 1000);
    const model = String(rec.body?.model ?? 'fake-model');
    const text = b.echo ? promptText(rec.body) : (b.reply ?? 'Hello from the fake upstream.');
    const calls = (b.toolCalls ?? []).map((c, i) => ({
      id: c.id ?? `call_${seq}_${i}`,
      type: 'function' as const,
      function: {
        name: c.name,
        arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}),
      },
    }));
    const finish = b.finishReason ?? (calls.length ? 'tool_calls' : 'stop');
    const parts = calls.length ? [] : pieces(text);
    // Asked for log probabilities: one entry a piece, as OpenAI gives them (a fixed logprob, the UTF-8 bytes).
    const lp = (t: string) => ({ token: t, logprob: -0.25, bytes: [...Buffer.from(t)], top_logprobs: [] });
    const wantsLogprobs = rec.body?.logprobs === true;
    const usage =
      b.usage === null
        ? undefined
        : {
            prompt_tokens: b.usage?.prompt_tokens ?? Math.ceil(promptText(rec.body).length / 4),
            completion_tokens: b.usage?.completion_tokens ?? parts.length,
            total_tokens: 0,
          };
    if (usage) usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;

    if (!rec.stream) {
      const message = calls.length
        ? { role: 'assistant', content: null, tool_calls: calls }
        : { role: 'assistant', content: text };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created,
          model,
          choices: [
            {
              index: 0,
              message,
              finish_reason: finish,
              ...(wantsLogprobs ? { logprobs: { content: parts.map(lp), refusal: null } } : {}),
            },
          ],
          ...(usage ? { usage } : {}),
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`,
      );
    send([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
    let sent = 0;
    for (const p of parts) {
      if (b.hangAfterChunks !== undefined && sent >= b.hangAfterChunks) return;
      if (b.dropAfterChunks !== undefined && sent >= b.dropAfterChunks) {
        await sleep(20); // let what was written reach the client first
        res.socket?.destroy();
        return;
      }
      if (b.chunkDelayMs && sent > 0) await sleep(b.chunkDelayMs);
      if (closed()) return;
      send([
        {
          index: 0,
          delta: { content: p },
          ...(wantsLogprobs ? { logprobs: { content: [lp(p)], refusal: null } } : {}),
          finish_reason: null,
        },
      ]);
      sent++;
    }
    if (b.hangAfterChunks !== undefined) return;
    if (b.dropAfterChunks !== undefined) {
      await sleep(20);
      res.socket?.destroy();
      return;
    }
    // As OpenAI streams calls: a call's first delta names it with empty arguments, then the arguments come in
    // pieces of up to 8 characters.
    for (const [index, c] of calls.entries()) {
      const head = { index, id: c.id, type: c.type, function: { name: c.function.name, arguments: '' } };
      send([{ index: 0, delta: { tool_calls: [head] }, finish_reason: null }]);
      for (let at = 0; at < c.function.arguments.length; at += 8) {
        if (b.chunkDelayMs) await sleep(b.chunkDelayMs);
        if (closed()) return;
        const piece = c.function.arguments.slice(at, at + 8);
        send([{ index: 0, delta: { tool_calls: [{ index, function: { arguments: piece } }] }, finish_reason: null }]);
      }
    }
    send([{ index: 0, delta: {}, finish_reason: finish }]);
    if (usage && rec.body?.stream_options?.include_usage) send([], { usage });
    res.end('data: [DONE]\n\n');
  }

  /** Writes `parts` as the behaviour paces them (a pause between them, the last held for `holdLast`, a drop). */
  async function sendPaced(
    res: http.ServerResponse,
    parts: Array<string | Buffer>,
    b: FakeBehavior,
    closed: () => boolean,
  ): Promise<void> {
    for (const [i, part] of parts.entries()) {
      if (b.dropAfterChunks !== undefined && i >= b.dropAfterChunks) {
        await sleep(20); // let what was written reach the client first
        res.socket?.destroy();
        return;
      }
      if (i === parts.length - 1 && b.holdLast) await b.holdLast;
      else if (i > 0 && b.chunkDelayMs) await sleep(b.chunkDelayMs);
      if (closed()) return;
      res.write(part);
    }
    res.end();
  }

  /**
   * OpenAI's Audio API. Speech (`/audio/speech`, JSON): fakeSpeech of the input in the format asked for, in four
   * chunks (chunked transfer), or as `speech.audio.delta` events and `speech.audio.done` with `stream_format: "sse"`.
   * Transcriptions and translations (multipart, recorded as `body`: the text fields and the files): a text naming
   * the file's size, type and name (and the language and prompt given), in the format asked for; a streamed
   * transcription as a `transcript.text.delta` event a word and `transcript.text.done`. Failures are decided by the
   * input (speech) or the prompt (transcripts): "status:NNN" answers that status (Retry-After: 7 on a 429),
   * "malformed" answers 200 with JSON that is neither; and by the next behaviour (status, hang, delays, holdLast,
   * dropAfterChunks).
   */
  async function audio(
    rec: RecordedRequest,
    contentType: string,
    raw: Buffer,
    res: http.ServerResponse,
    closed: () => boolean,
  ): Promise<void> {
    const kind = rec.path.split('/').pop();
    let fields: Record<string, unknown> = rec.body ?? {};
    let file: FakeFormFile | undefined;
    if (kind !== 'speech') {
      const form = await readFakeForm(raw, contentType);
      if (!form) {
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'not a form' } }));
        return;
      }
      rec.body = { ...form.fields, files: form.files };
      fields = form.fields;
      file = form.files.find((f) => f.field === 'file');
    }
    const b = queue.shift() ?? handler?.(rec) ?? defaults;
    if (b.delayMs) await sleep(b.delayMs);
    if (b.gate) await b.gate;
    if (b.hang || closed()) return;
    const said = String((kind === 'speech' ? fields.input : fields.prompt) ?? '');
    const status = b.status ?? Number(/status:(\d{3})/.exec(said)?.[1] ?? 0);
    if (status >= 400) {
      res
        .writeHead(status, {
          'content-type': 'application/json',
          ...(status === 429 ? { 'retry-after': b.retryAfter ?? '7' } : {}),
        })
        .end(JSON.stringify({ error: { message: `fake failure ${status}`, type: 'invalid_request_error' } }));
      return;
    }
    if (/malformed/.test(said)) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true }));
      return;
    }
    const events = (list: unknown[]) => list.map((e) => `data: ${JSON.stringify(e)}\n\n`);
    if (kind === 'speech') {
      const input = String(fields.input ?? '');
      const format = String(fields.response_format ?? 'mp3');
      const chunks = split(fakeSpeech(input, format), 4);
      if (fields.stream_format === 'sse') {
        const usage = { input_tokens: Math.ceil(input.length / 4), output_tokens: 40, total_tokens: 0 };
        usage.total_tokens = usage.input_tokens + usage.output_tokens;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const deltas = chunks.map((c) => ({ type: 'speech.audio.delta', audio: c.toString('base64') }));
        return sendPaced(res, events([...deltas, { type: 'speech.audio.done', usage }]), b, closed);
      }
      res.writeHead(200, { 'content-type': FAKE_SPEECH_TYPES[format] ?? 'audio/mpeg' });
      return sendPaced(res, chunks, b, closed);
    }
    const translate = kind === 'translations';
    const text =
      `${translate ? 'Translated' : 'Transcribed'} ${file?.size ?? 0} bytes of ${file?.type || 'no type'} named ${file?.name}` +
      (fields.language ? ` in ${String(fields.language)}` : '') +
      (fields.prompt ? ` after: ${String(fields.prompt)}` : '');
    const words = pieces(text);
    const duration = Math.round(((file?.size ?? 0) / 32_000) * 100) / 100;
    const usage = {
      type: 'tokens',
      input_tokens: 20,
      input_token_details: { text_tokens: 0, audio_tokens: 20 },
      output_tokens: words.length,
      total_tokens: 20 + words.length,
    };
    if (fields.stream === 'true' && !translate) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const deltas = words.map((delta) => ({ type: 'transcript.text.delta', delta }));
      return sendPaced(res, events([...deltas, { type: 'transcript.text.done', text, usage }]), b, closed);
    }
    const answer = (type: string, body: string) => res.writeHead(200, { 'content-type': type }).end(body);
    const plain = 'text/plain; charset=utf-8';
    switch (String(fields.response_format ?? 'json')) {
      case 'text':
        return void answer(plain, `${text}\n`);
      case 'srt':
        return void answer(plain, `1\n${clock(0, ',')} --> ${clock(duration, ',')}\n${text}\n\n`);
      case 'vtt':
        return void answer(plain, `WEBVTT\n\n${clock(0, '.')} --> ${clock(duration, '.')}\n${text}\n\n`);
      case 'verbose_json': {
        const granularities = [fields['timestamp_granularities[]'] ?? []].flat();
        const segment = {
          ...{ id: 0, seek: 0, start: 0, end: duration, text, tokens: [50364, 440, 50530] },
          ...{ temperature: Number(fields.temperature ?? 0), avg_logprob: -0.2, compression_ratio: 1.1 },
          no_speech_prob: 0.01,
        };
        const timed = words.map((w, i) => ({ word: w.trim(), start: i / 2, end: i / 2 + 0.4 }));
        return void answer(
          'application/json',
          JSON.stringify({
            task: translate ? 'translate' : 'transcribe',
            language: translate ? 'english' : String(fields.language ?? 'english'),
            duration,
            text,
            segments: [segment],
            ...(granularities.includes('word') ? { words: timed } : {}),
            ...(translate ? {} : { usage: { type: 'duration', seconds: Math.ceil(duration) } }),
          }),
        );
      }
      default:
        return void answer('application/json', JSON.stringify(translate ? { text } : { text, usage }));
    }
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: any;
      try {
        body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      } catch {
        body = undefined;
      }
      const path = (req.url ?? '/').split('?')[0];
      const rec: RecordedRequest = {
        method: req.method ?? 'GET',
        path,
        headers: req.headers,
        body,
        stream: body?.stream === true,
        at: Date.now(),
        finished: false,
        closedEarly: false,
      };
      requests.push(rec);
      if (opts.apiKey && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
        res
          .writeHead(401, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'bad key' } }));
        return;
      }
      if (req.method === 'GET' && path.endsWith('/models')) {
        const data = (opts.models ?? ['fake-model']).map((id) => ({
          id,
          object: 'model',
          created: 0,
          owned_by: 'fake',
        }));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data }));
        return;
      }
      if (req.method === 'POST' && path.endsWith('/moderations')) {
        // OpenAI's moderation protocol, decided by the input: a text with "kill" is flagged as violence; a text
        // "status:NNN" answers that HTTP status (Retry-After: 7 on a 429); "malformed" answers without results.
        // Texts get a result each; parts (text and image_url) one result.
        const input: unknown = body?.input;
        const texts = typeof input === 'string' ? [input] : Array.isArray(input) ? input : [];
        const all = texts.map((t: any) => (typeof t === 'string' ? t : String(t?.text ?? ''))).join(' ');
        const status = /status:(\d{3})/.exec(all)?.[1];
        if (status) {
          res
            .writeHead(Number(status), {
              'content-type': 'application/json',
              ...(status === '429' ? { 'retry-after': '7' } : {}),
            })
            .end(JSON.stringify({ error: { message: 'scripted failure' } }));
          return;
        }
        const result = (text: string, images: boolean) => {
          const violent = /kill/i.test(text);
          const each = <T>(f: (c: string) => T) => Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, f(c)]));
          return {
            flagged: violent,
            categories: each((c) => violent && c === 'violence'),
            category_scores: each((c) => (violent && c === 'violence' ? 0.91 : 0.01)),
            category_applied_input_types: each((c) => (images && c === 'violence' ? ['text', 'image'] : ['text'])),
          };
        };
        const parts = texts.length > 0 && texts.every((t: unknown) => typeof t === 'object');
        const results = parts
          ? [
              result(
                all,
                texts.some((t: any) => t?.type === 'image_url'),
              ),
            ]
          : texts.map((t: any) => result(String(t), false));
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(
            JSON.stringify(
              /malformed/.test(all)
                ? { id: 'modr-x' }
                : { id: `modr-fake${++seq}`, model: String(body?.model), results },
            ),
          );
        return;
      }
      if (req.method === 'POST' && path.endsWith('/embeddings') && opts.embeddings?.enabled !== false) {
        // OpenAI-compatible: `input` is a string or an array of strings; one vector per input.
        // Token ids (an array of integers, or arrays of them) are embedded as the text of their numbers.
        const input: unknown = body?.input;
        const ids = (x: unknown) => Array.isArray(x) && x.length > 0 && x.every((n) => Number.isInteger(n));
        const texts =
          typeof input === 'string'
            ? [input]
            : ids(input)
              ? [(input as number[]).join(' ')]
              : Array.isArray(input) && input.every((x) => typeof x === 'string' || ids(x))
                ? (input as Array<string | number[]>).map((x) => (typeof x === 'string' ? x : x.join(' ')))
                : null;
        if (opts.embeddings?.status) {
          const headers = {
            'content-type': 'application/json',
            ...(opts.embeddings.status === 429 ? { 'retry-after': '7' } : {}),
          };
          res
            .writeHead(opts.embeddings.status, headers)
            .end(JSON.stringify({ error: { message: 'scripted failure' } }));
          return;
        }
        if (!texts || !texts.length) {
          res.writeHead(400, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              error: { message: "'input' must be a string or an array of strings", type: 'invalid_request_error' },
            }),
          );
          return;
        }
        const data = texts.map((t, index) => ({
          object: 'embedding',
          index,
          embedding: fakeEmbedding(
            t,
            opts.embeddings?.dimensions !== false && typeof body?.dimensions === 'number'
              ? body.dimensions
              : opts.embeddings?.dims,
          ),
        }));
        if (opts.embeddings?.reverse) data.reverse();
        const tokens = texts.reduce((a, t) => a + Math.ceil(t.length / 4), 0);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            object: 'list',
            data,
            model: String(body?.model ?? 'fake-embedding'),
            usage: { prompt_tokens: tokens, total_tokens: tokens },
          }),
        );
        rec.finished = true;
        return;
      }
      if (req.method === 'POST' && /\/audio\/(speech|transcriptions|translations)$/.test(path)) {
        let isClosed = false;
        res.on('close', () => {
          isClosed = true;
          rec.finished = res.writableFinished;
          rec.closedEarly = !res.writableFinished;
        });
        audio(rec, String(req.headers['content-type'] ?? ''), Buffer.concat(chunks), res, () => isClosed).catch(() =>
          res.socket?.destroy(),
        );
        return;
      }
      if (req.method === 'POST' && (path.endsWith('/images/edits') || path.endsWith('/images/variations'))) {
        // OpenAI's multipart image edits and variations: the form is recorded as `body` (its text fields, and each
        // file's field, type and size); the answer is `n` copies of a 1x1 PNG, or the next behaviour's failure.
        void (async () => {
          const form = await readFakeForm(Buffer.concat(chunks), String(req.headers['content-type'] ?? ''));
          const fields = form?.fields ?? {};
          rec.body = { ...fields, files: form?.files ?? [] };
          const b = queue.shift() ?? handler?.(rec) ?? defaults;
          if (!form || (b.status && b.status >= 400)) {
            res
              .writeHead(form ? b.status! : 400, { 'content-type': 'application/json' })
              .end(JSON.stringify({ error: { message: form ? `fake failure ${b.status}` : 'not a form' } }));
            return;
          }
          const n = Number(fields.n ?? 1);
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              created: Math.floor(Date.now() / 1000),
              data: Array.from({ length: n }, () => ({ b64_json: b.reply ?? FAKE_PNG_B64 })),
            }),
          );
          rec.finished = true;
        })();
        return;
      }
      if (req.method === 'POST' && path.endsWith('/images/generations')) {
        // OpenAI Images API: the next behaviour decides (status for failures; hang: never answers, until the client
        // goes away); else `n` copies of a 1x1 PNG as b64_json.
        const b = queue.shift() ?? handler?.(rec) ?? defaults;
        if (b.hang) {
          res.on('close', () => (rec.closedEarly = !res.writableFinished));
          return;
        }
        if (b.status && b.status >= 400) {
          res.writeHead(b.status, {
            'content-type': 'application/json',
            ...(b.retryAfter ? { 'retry-after': b.retryAfter } : {}),
          });
          res.end(JSON.stringify({ error: { message: `fake failure ${b.status}`, type: 'server_error' } }));
          return;
        }
        const n = Number(body?.n ?? 1);
        const b64 = b.reply ?? FAKE_PNG_B64;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            created: Math.floor(Date.now() / 1000),
            data: Array.from({ length: n }, () => ({ b64_json: b64, revised_prompt: `fake: ${body?.prompt ?? ''}` })),
          }),
        );
        rec.finished = true;
        return;
      }
      if (req.method !== 'POST' || !path.endsWith('/chat/completions')) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'no such route' } }));
        return;
      }
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      let isClosed = false;
      res.on('close', () => {
        isClosed = true;
        rec.closedAt = Date.now();
        inFlight--;
        rec.finished = res.writableFinished;
        rec.closedEarly = !res.writableFinished;
      });
      const behavior = queue.shift() ?? handler?.(rec) ?? defaults;
      chat(rec, behavior, res, () => isClosed).catch(() => res.socket?.destroy());
    });
  });
  server.keepAliveTimeout = 5_000;
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    get chats() {
      return requests.filter((r) => r.method === 'POST' && r.path.endsWith('/chat/completions'));
    },
    get moderationRequests() {
      return requests.filter((r) => r.method === 'POST' && r.path.endsWith('/moderations'));
    },
    get embeddingRequests() {
      return requests.filter((r) => r.method === 'POST' && r.path.endsWith('/embeddings'));
    },
    get audioRequests() {
      return requests.filter((r) => r.method === 'POST' && r.path.includes('/audio/'));
    },
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    get connections() {
      return connections;
    },
    script: (...b) => void queue.push(...b),
    setDefault: (b) => void (defaults = b),
    onRequest: (fn) => void (handler = fn),
    reset() {
      requests.length = 0;
      queue = [];
      handler = undefined;
      maxInFlight = inFlight;
    },
    async waitFor(pred, timeoutMs = 5_000) {
      const until = Date.now() + timeoutMs;
      while (!pred()) {
        if (Date.now() > until) throw new Error('fake upstream: condition not met in time');
        await sleep(10);
      }
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** For beforeEach: waits until none of `fakes` has a chat request in flight (an earlier test's), then resets them. */
export async function resetWhenIdle(...fakes: FakeOpenAI[]): Promise<void> {
  await fakes[0].waitFor(() => fakes.every((f) => f.inFlight === 0));
  for (const f of fakes) f.reset();
}
