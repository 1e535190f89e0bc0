import { fileTypeFromBuffer } from 'file-type';
import OpenAI, { toFile } from 'openai';
import { SPEECH_CONTENT_TYPES, SPEECH_FORMATS } from '../../schema/audio';
import { fakeSpeech, makeWav, type FakeOpenAI, type FakeFormFile } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { contractErrors } from '../helpers/openai-contract';
import { pollUntil } from '../helpers/poll';
import { withHarness } from '../helpers/with-harness';

// OpenAI's Audio API (speech, transcriptions, translations) over the configured provider: a fake OpenAI-compatible
// upstream that speaks deterministic bytes, names the file it was sent in its transcripts, and fails as asked.

let fake: FakeOpenAI;
let h: Harness;
let key: string;
let client: OpenAI;
withFakeUpstream(
  {
    scopes: ['runtime:chat'],
    // A small upload limit (the 413 without megabytes) and a short provider time-out (the 504 without minutes).
    env: { SVC_UPLOAD_LIMIT: String(256 * 1024), SVC_AUDIO_TIMEOUT_MS: '2000' },
    resetEach: {},
  },
  (up) => {
    ({ fake, h, key } = up);
    client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
  },
);

const wav = makeWav(0.5);
const paths = (body: { details?: Array<{ path: string }> }) => (body?.details ?? []).map((d) => d.path).sort();
const lastAudio = () => fake.audioRequests.at(-1)!;
type FormSent = Record<string, unknown> & { files: FakeFormFile[] };
const formSent = () => lastAudio().body as FormSent;

/** A speech request (raw fetch: the SDK would fix what we test; the answer unread). */
const speak = (body: unknown, init: RequestInit = {}) =>
  fetch(`${h.url}/v1/audio/speech`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...init,
  });

/** A multipart request to an audio route with this file and these fields (lists as repeated `name[]`). */
async function upload(
  path: string,
  file: Buffer | undefined,
  fields: Record<string, string | string[]> = {},
  opts: { name?: string; k?: string; signal?: AbortSignal } = {},
) {
  const form = new FormData();
  if (file) form.append('file', new Blob([new Uint8Array(file)]), opts.name ?? 'clip.wav');
  for (const [name, value] of Object.entries(fields))
    for (const v of [value].flat()) form.append(Array.isArray(value) ? `${name}[]` : name, v);
  const res = await fetch(`${h.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${opts.k ?? key}` },
    body: form,
    signal: opts.signal,
  });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, type: res.headers.get('content-type'), headers: res.headers, text, body };
}

/** The `data` payloads of an SSE text, parsed. */
const sseEvents = (text: string) =>
  text
    .split('\n\n')
    .map((e) =>
      e
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n'),
    )
    .filter(Boolean)
    .map((d) => JSON.parse(d) as Record<string, any>);

/** The tenant's usage of one lane (requests and tokens so far). */
async function laneUsage(lane: string) {
  const r = await h.req('GET', '/v1/usage?group_by=lane', { key });
  const row = r.body.data.find((d: { group: string }) => d.group === lane);
  return { requests: row?.requests ?? 0, tokens_in: row?.tokens_in ?? 0, tokens_out: row?.tokens_out ?? 0 };
}

/** A promise the test settles: what the fake waits for before its last chunk. */
function gate() {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

describe('POST /v1/audio/speech', () => {
  test('the SDK: audio of the provider’s speech model, as mp3 by default; voice, instructions and speed passed on', async () => {
    const before = await laneUsage('svc-speech');
    const res = await client.audio.speech.create({
      model: 'svc-speech',
      input: 'Hello from the audio test.',
      voice: 'coral',
      instructions: 'Cheerful.',
      speed: 1.25,
    });
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.equals(fakeSpeech('Hello from the audio test.', 'mp3'))).toBe(true);
    expect(lastAudio().path).toBe('/v1/audio/speech');
    expect(lastAudio().body).toEqual({
      model: 'gpt-4o-mini-tts',
      input: 'Hello from the audio test.',
      voice: 'coral',
      instructions: 'Cheerful.',
      speed: 1.25,
    });
    // The configured upstream name is taken too; a custom voice goes as {id}; model may be left out.
    const custom = await speak({ model: 'gpt-4o-mini-tts', input: 'x', voice: { id: 'voice_123' } });
    expect(custom.status).toBe(200);
    await custom.arrayBuffer();
    expect(lastAudio().body).toMatchObject({ model: 'gpt-4o-mini-tts', voice: { id: 'voice_123' } });
    const bare = await speak({ input: 'x', voice: 'alloy' });
    expect(bare.status).toBe(200);
    await bare.arrayBuffer();
    const after = await pollUntil(
      () => laneUsage('svc-speech'),
      (u) => u.requests >= before.requests + 3,
    );
    expect(after.requests).toBe(before.requests + 3);
  });

  test('every format: the provider’s bytes with the format’s content type (what a sniffer reads them as)', async () => {
    const sniffed: Record<string, string | undefined> = {};
    for (const format of SPEECH_FORMATS) {
      const res = await speak({ input: `In ${format}.`, voice: 'alloy', response_format: format });
      expect([format, res.status, res.headers.get('content-type')]).toEqual([
        format,
        200,
        SPEECH_CONTENT_TYPES[format],
      ]);
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(bytes.equals(fakeSpeech(`In ${format}.`, format))).toBe(true);
      expect(lastAudio().body.response_format).toBe(format);
      sniffed[format] = (await fileTypeFromBuffer(bytes))?.ext;
    }
    expect(sniffed).toEqual({ mp3: 'mp3', opus: 'opus', aac: 'aac', flac: 'flac', wav: 'wav', pcm: undefined });
  });

  test('streamed through: the first bytes arrive while the provider still holds its last chunk', async () => {
    const last = gate();
    fake.script({ holdLast: last.promise });
    const input = 'A long sentence, streamed as it is spoken.';
    const res = await speak({ input, voice: 'alloy', response_format: 'wav' });
    expect([res.status, res.headers.get('content-type'), res.headers.get('content-length')]).toEqual([
      200,
      'audio/wav',
      null,
    ]);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.value!.length).toBeGreaterThan(0);
    // The provider has not finished: the service did not wait for the whole answer.
    expect(lastAudio().finished).toBe(false);
    const got = [Buffer.from(first.value!)];
    last.open();
    for (let r = await reader.read(); !r.done; r = await reader.read()) got.push(Buffer.from(r.value));
    expect(Buffer.concat(got).equals(fakeSpeech(input, 'wav'))).toBe(true);
    await fake.waitFor(() => lastAudio().finished);
  });

  test('stream_format sse: the provider’s speech.audio events passed through, in OpenAI’s contract; usage metered', async () => {
    const before = await laneUsage('svc-speech');
    const res = await client.audio.speech.create({
      model: 'svc-speech',
      input: 'Speak in events.',
      voice: 'alloy',
      stream_format: 'sse',
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = sseEvents(await res.text());
    expect(events.map((e) => e.type)).toEqual([
      'speech.audio.delta',
      'speech.audio.delta',
      'speech.audio.delta',
      'speech.audio.delta',
      'speech.audio.done',
    ]);
    for (const e of events) expect(contractErrors('CreateSpeechResponseStreamEvent', e)).toEqual([]);
    const audio = Buffer.concat(events.slice(0, -1).map((e) => Buffer.from(e.audio, 'base64')));
    expect(audio.equals(fakeSpeech('Speak in events.'))).toBe(true);
    expect(lastAudio().body.stream_format).toBe('sse');
    const usage = events.at(-1)!.usage;
    const after = await pollUntil(
      () => laneUsage('svc-speech'),
      (u) => u.requests > before.requests,
    );
    expect([after.tokens_in - before.tokens_in, after.tokens_out - before.tokens_out]).toEqual([
      usage.input_tokens,
      usage.output_tokens,
    ]);
  });

  test('bad fields are 400 naming the field, an unknown model 404, not JSON 415, no scope 403: none reach the provider', async () => {
    const before = fake.audioRequests.length;
    const ok = { input: 'x', voice: 'alloy' };
    const bad: Array<[unknown, string]> = [
      [{ voice: 'alloy' }, 'body.input'],
      [{ ...ok, input: '' }, 'body.input'],
      [{ ...ok, input: 'x'.repeat(4097) }, 'body.input'],
      [{ input: 'x' }, 'body.voice'],
      [{ ...ok, voice: {} }, 'body.voice.id'],
      [{ ...ok, voice: 7 }, 'body.voice'],
      [{ ...ok, instructions: 'x'.repeat(4097) }, 'body.instructions'],
      [{ ...ok, response_format: 'ogg' }, 'body.response_format'],
      [{ ...ok, speed: 4.5 }, 'body.speed'],
      [{ ...ok, speed: 0.2 }, 'body.speed'],
      [{ ...ok, speed: '1' }, 'body.speed'],
      [{ ...ok, stream_format: 'chunks' }, 'body.stream_format'],
      [{ ...ok, model: '' }, 'body.model'],
    ];
    for (const [body, path] of bad) {
      const r = await h.req('POST', '/v1/audio/speech', { key, body });
      expect([JSON.stringify(body).slice(0, 60), r.status, r.body.code, paths(r.body)]).toEqual([
        JSON.stringify(body).slice(0, 60),
        400,
        'invalid_request',
        [path],
      ]);
    }
    const unknown = await h.req('POST', '/v1/audio/speech', { key, body: { ...ok, model: 'tts-1' } });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'model_not_found']);
    expect(unknown.body.error).toMatch(/svc-speech/);
    const text = await h.req('POST', '/v1/audio/speech', {
      key,
      raw: 'input=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(text.status).toBe(415);
    const modelsOnly = (await h.key(['runtime:models'])).apiKey;
    expect((await h.req('POST', '/v1/audio/speech', { key: modelsOnly, body: ok })).status).toBe(403);
    expect(fake.audioRequests.length).toBe(before);
  });

  test('provider failures: 429 with its Retry-After; 4xx, 5xx, no endpoint, not audio 502; no answer in time 504', async () => {
    const ask = async (input: string, extra: Record<string, unknown> = {}) => {
      const r = await speak({ input, voice: 'alloy', ...extra });
      const body = (await r.json().catch(() => undefined)) as { code?: string; error?: string } | undefined;
      return { status: r.status, retryAfter: r.headers.get('retry-after'), code: body?.code, error: body?.error };
    };
    expect(await ask('status:429')).toMatchObject({ status: 429, retryAfter: '7', code: 'rate_limited' });
    expect(await ask('status:400')).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(await ask('status:500')).toMatchObject({ status: 502, code: 'upstream_error' });
    const missing = await ask('status:404');
    expect([missing.status, missing.error]).toEqual([
      502,
      expect.stringMatching(/no speech endpoint.*SVC_SPEECH_MODEL/),
    ]);
    // JSON where audio or events were asked for.
    expect(await ask('malformed')).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(await ask('malformed', { stream_format: 'sse' })).toMatchObject({ status: 502, code: 'upstream_error' });
    fake.script({ hang: true });
    const started = Date.now();
    expect(await ask('slow')).toMatchObject({ status: 504, code: 'upstream_timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    await fake.waitFor(() => lastAudio().closedEarly);
  });

  test('a provider that breaks off mid-audio: the client’s connection is cut, never a truncated file that looks whole', async () => {
    fake.script({ dropAfterChunks: 2 });
    const res = await speak({ input: 'Cut short.', voice: 'alloy' });
    expect(res.status).toBe(200);
    await expect(res.arrayBuffer()).rejects.toThrow();
    // SSE: the stream ends with an error event (what OpenAI's SDKs raise).
    fake.script({ dropAfterChunks: 2 });
    const sse = await speak({ input: 'Cut short.', voice: 'alloy', stream_format: 'sse' });
    const events = sseEvents(await sse.text());
    expect(events.map((e) => e.type)).toEqual(['speech.audio.delta', 'speech.audio.delta', 'error']);
    expect(events.at(-1)!.error).toMatchObject({ code: 'upstream_error', status: 502 });
  });

  test('a client that goes away mid-audio aborts the provider’s request', async () => {
    const never = gate();
    fake.script({ holdLast: never.promise });
    const ctl = new AbortController();
    const res = await speak({ input: 'Nobody listens.', voice: 'alloy' }, { signal: ctl.signal });
    const reader = res.body!.getReader();
    expect((await reader.read()).value!.length).toBeGreaterThan(0);
    const rec = lastAudio();
    expect(rec.closedEarly).toBe(false);
    ctl.abort();
    await fake.waitFor(() => rec.closedEarly, 1000);
    expect(rec.finished).toBe(false);
  });
});

describe('POST /v1/audio/transcriptions', () => {
  test('the SDK with a real WAV: the file (typed from its bytes) and the provider’s model reach it; JSON in the contract', async () => {
    const before = await laneUsage('svc-transcribe');
    const res = await client.audio.transcriptions.create({
      file: await toFile(wav, 'greeting.wav', { type: 'audio/wav' }),
      model: 'whisper-1',
      language: 'en',
      prompt: 'A greeting.',
      temperature: 0.2,
      include: ['logprobs'],
    });
    expect(contractErrors('CreateTranscriptionResponseJson', res)).toEqual([]);
    expect(res.text).toBe(`Transcribed ${wav.length} bytes of audio/wav named audio.wav in en after: A greeting.`);
    expect(lastAudio().path).toBe('/v1/audio/transcriptions');
    const sent = formSent();
    expect(sent).toMatchObject({
      model: 'whisper-1',
      language: 'en',
      prompt: 'A greeting.',
      temperature: '0.2',
      'include[]': 'logprobs',
    });
    expect(sent.files.map((f) => [f.field, f.name, f.type, f.bytes.equals(wav)])).toEqual([
      ['file', 'audio.wav', 'audio/wav', true],
    ]);
    // The provider's token usage is metered.
    const after = await pollUntil(
      () => laneUsage('svc-transcribe'),
      (u) => u.requests > before.requests,
    );
    expect([after.tokens_in - before.tokens_in, after.tokens_out - before.tokens_out]).toEqual([
      res.usage!.type === 'tokens' ? res.usage!.input_tokens : -1,
      res.usage!.type === 'tokens' ? res.usage!.output_tokens : -1,
    ]);
  });

  test('verbose_json with word and segment timestamps (sent as timestamp_granularities[]), in the contract', async () => {
    const res = await client.audio.transcriptions.create({
      file: await toFile(wav, 'clip.wav'),
      model: 'svc-transcribe',
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
    });
    expect(contractErrors('CreateTranscriptionResponseVerboseJson', res)).toEqual([]);
    expect(res.words?.length).toBeGreaterThan(3);
    expect(res.segments).toHaveLength(1);
    expect(formSent()['timestamp_granularities[]']).toEqual(['word', 'segment']);
    expect(formSent().response_format).toBe('verbose_json');
  });

  test('text, srt and vtt answered as text/plain, as the provider wrote them', async () => {
    const named = `Transcribed ${wav.length} bytes of audio/wav named audio.wav`;
    const text = await client.audio.transcriptions.create({
      file: await toFile(wav, 'clip.wav'),
      model: 'whisper-1',
      response_format: 'text',
    });
    expect(text).toBe(`${named}\n`);
    for (const [format, start] of [
      ['srt', '1\n00:00:00,000 --> 00:00:00,500\n'],
      ['vtt', 'WEBVTT\n\n00:00:00.000 --> 00:00:00.500\n'],
    ]) {
      const r = await upload('/v1/audio/transcriptions', wav, { response_format: format });
      expect([r.status, r.type, r.text]).toEqual([200, 'text/plain; charset=utf-8', `${start}${named}\n\n`]);
    }
  });

  test('the type is read from the bytes, not the name: mp3 and Ogg sent on with their own names', async () => {
    const mp3 = fakeSpeech('an mp3', 'mp3');
    const r = await upload('/v1/audio/transcriptions', mp3, {}, { name: 'notes.txt' });
    expect(r.status).toBe(200);
    expect(formSent().files.map((f) => [f.name, f.type])).toEqual([['audio.mp3', 'audio/mpeg']]);
    const ogg = await upload('/v1/audio/transcriptions', fakeSpeech('an opus', 'opus'), {}, { name: 'x.mp3' });
    expect(ogg.status).toBe(200);
    expect(formSent().files.map((f) => f.name)).toEqual(['audio.ogg']);
  });

  test('stream: the provider’s transcript.text events passed through, in the contract, as the SDK reads them', async () => {
    const stream = await client.audio.transcriptions.create({
      file: await toFile(wav, 'clip.wav'),
      model: 'svc-transcribe',
      stream: true,
    });
    const events: Array<Record<string, any>> = [];
    for await (const e of stream) events.push(e as unknown as Record<string, any>);
    expect(formSent().stream).toBe('true');
    const done = events.at(-1)!;
    expect(done.type).toBe('transcript.text.done');
    expect(events.length).toBeGreaterThan(3);
    for (const e of events) expect(contractErrors('CreateTranscriptionResponseStreamEvent', e)).toEqual([]);
    expect(
      events
        .slice(0, -1)
        .map((e) => e.delta)
        .join(''),
    ).toBe(done.text);
    // The first events arrive while the provider holds its last one.
    const last = gate();
    fake.script({ holdLast: last.promise });
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(wav)]), 'clip.wav');
    form.append('stream', 'true');
    const res = await fetch(`${h.url}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toMatch(/^data: \{"type":"transcript\.text\.delta"/);
    expect(lastAudio().finished).toBe(false);
    last.open();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    expect(sseEvents(first + rest).at(-1)!.type).toBe('transcript.text.done');
  });

  test('bad fields are 400 naming the field, an unknown model 404, no scope 403: none reach the provider', async () => {
    const before = fake.audioRequests.length;
    const bad: Array<[Record<string, string | string[]>, string]> = [
      [{ response_format: 'diarized_json' }, 'body.response_format'],
      [{ temperature: '2' }, 'body.temperature'],
      [{ temperature: 'warm' }, 'body.temperature'],
      [{ language: 'english' }, 'body.language'],
      [{ prompt: 'x'.repeat(4097) }, 'body.prompt'],
      [{ response_format: 'verbose_json', timestamp_granularities: ['char'] }, 'body.timestamp_granularities.0'],
      [{ timestamp_granularities: ['word'] }, 'body.timestamp_granularities'],
      [{ include: ['tokens'] }, 'body.include.0'],
      [{ stream: 'yes' }, 'body.stream'],
      [{ model: '' }, 'body.model'],
    ];
    for (const [fields, path] of bad) {
      const r = await upload('/v1/audio/transcriptions', wav, fields);
      expect([JSON.stringify(fields), r.status, paths(r.body)]).toEqual([JSON.stringify(fields), 400, [path]]);
    }
    const none = await upload('/v1/audio/transcriptions', undefined, { model: 'whisper-1' });
    expect([none.status, paths(none.body)]).toEqual([400, ['body.file']]);
    const unknown = await upload('/v1/audio/transcriptions', wav, { model: 'gpt-4o-transcribe' });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'model_not_found']);
    const modelsOnly = (await h.key(['runtime:models'])).apiKey;
    expect((await upload('/v1/audio/transcriptions', wav, {}, { k: modelsOnly })).status).toBe(403);
    expect(fake.audioRequests.length).toBe(before);
  });

  test('not multipart 415, not audio 415 naming the file, over the upload limit 413: none reach the provider', async () => {
    const before = fake.audioRequests.length;
    const json = await h.req('POST', '/v1/audio/transcriptions', { key, body: { model: 'whisper-1' } });
    expect([json.status, json.body.code]).toEqual([415, 'unsupported_media_type']);
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
      'base64',
    );
    for (const bytes of [png, Buffer.from('just some words, not audio'), Buffer.from('RIFF\0\0\0\0AVI LIST')]) {
      const r = await upload('/v1/audio/transcriptions', bytes, {}, { name: 'clip.wav' });
      expect([r.status, r.body.code, paths(r.body)]).toEqual([415, 'unsupported_media_type', ['body.file']]);
    }
    const big = await upload('/v1/audio/transcriptions', makeWav(9), {});
    expect([big.status, big.body.code]).toEqual([413, 'payload_too_large']);
    const bigTranslation = await upload('/v1/audio/translations', makeWav(9), {});
    expect(bigTranslation.status).toBe(413);
    expect(fake.audioRequests.length).toBe(before);
  });

  test('provider failures: 429 with its Retry-After, 4xx/5xx/no endpoint/malformed 502, no answer in time 504', async () => {
    const ask = (prompt: string, extra: Record<string, string> = {}) =>
      upload('/v1/audio/transcriptions', wav, { prompt, ...extra });
    const limited = await ask('status:429');
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '7']);
    expect((await ask('status:400')).status).toBe(502);
    expect((await ask('status:503')).status).toBe(502);
    const missing = await ask('status:405');
    expect([missing.status, missing.body.error]).toEqual([
      502,
      expect.stringMatching(/no transcription endpoint.*SVC_TRANSCRIPTION_MODEL/),
    ]);
    expect((await ask('malformed')).body.code).toBe('upstream_error');
    // JSON where text was asked for is no transcript either.
    expect((await ask('malformed', { response_format: 'srt' })).status).toBe(502);
    fake.script({ hang: true });
    expect(await ask('slow')).toMatchObject({ status: 504, body: { code: 'upstream_timeout' } });
  });

  test('a client that goes away while the provider works aborts the provider’s request', async () => {
    fake.script({ hang: true });
    const ctl = new AbortController();
    const pending = upload('/v1/audio/transcriptions', wav, {}, { signal: ctl.signal }).catch((e: Error) => e);
    await fake.waitFor(() => fake.audioRequests.length > 0 && !lastAudio().finished);
    const rec = lastAudio();
    ctl.abort();
    expect(await pending).toMatchObject({ name: 'AbortError' });
    // Well before the provider time-out (2 s) would close it.
    await fake.waitFor(() => rec.closedEarly, 1000);
  });
});

describe('POST /v1/audio/translations', () => {
  test('the SDK: json and verbose_json in the contract, text as text; the translation model asked', async () => {
    const res = await client.audio.translations.create({
      file: await toFile(wav, 'bonjour.wav'),
      model: 'whisper-1',
      prompt: 'Greetings.',
    });
    expect(contractErrors('CreateTranslationResponseJson', res)).toEqual([]);
    expect(res.text).toBe(`Translated ${wav.length} bytes of audio/wav named audio.wav after: Greetings.`);
    expect(lastAudio().path).toBe('/v1/audio/translations');
    expect(formSent()).toMatchObject({ model: 'whisper-1', prompt: 'Greetings.' });
    const verbose = await client.audio.translations.create({
      file: await toFile(wav, 'bonjour.wav'),
      model: 'svc-translate',
      response_format: 'verbose_json',
    });
    expect(contractErrors('CreateTranslationResponseVerboseJson', verbose)).toEqual([]);
    expect((verbose as unknown as { language: string }).language).toBe('english');
    const text = await upload('/v1/audio/translations', wav, { response_format: 'vtt' });
    expect([text.status, text.type]).toEqual([200, 'text/plain; charset=utf-8']);
    expect(text.text).toMatch(/^WEBVTT\n/);
  });

  test('refusals as transcriptions’: fields named, the file by its bytes, an unknown model 404', async () => {
    const before = fake.audioRequests.length;
    const bad = await upload('/v1/audio/translations', wav, { response_format: 'diarized_json', temperature: '-1' });
    expect([bad.status, paths(bad.body)]).toEqual([400, ['body.response_format', 'body.temperature']]);
    const notAudio = await upload('/v1/audio/translations', Buffer.from('%PDF-1.4 not audio'));
    expect([notAudio.status, paths(notAudio.body)]).toEqual([415, ['body.file']]);
    const unknown = await upload('/v1/audio/translations', wav, { model: 'svc-transcribe' });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'model_not_found']);
    expect(fake.audioRequests.length).toBe(before);
    const failed = await upload('/v1/audio/translations', wav, { prompt: 'status:404' });
    expect([failed.status, failed.body.error]).toEqual([502, expect.stringMatching(/no translation endpoint/)]);
  });
});

describe('without a provider', () => {
  let bare: Harness;
  let bareKey: string;
  withHarness({ scopes: ['runtime:chat'] }, (hh, k) => {
    bare = hh;
    bareKey = k;
  });

  test('every audio route is 503 naming OPENAI_BASE_URL', async () => {
    const s = await bare.req('POST', '/v1/audio/speech', { key: bareKey, body: { input: 'x', voice: 'alloy' } });
    expect([s.status, s.body.code]).toEqual([503, 'service_unavailable']);
    expect(s.body.error).toMatch(/OPENAI_BASE_URL/);
    for (const path of ['/v1/audio/transcriptions', '/v1/audio/translations']) {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(wav)]), 'clip.wav');
      const r = await fetch(`${bare.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bareKey}` },
        body: form,
      });
      const body = (await r.json()) as { error: string };
      expect([path, r.status, body.error]).toEqual([path, 503, expect.stringMatching(/OPENAI_BASE_URL/)]);
    }
  });
});
