import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { requestSpeech, requestTranscript, sniffAudio } from '../../activities/providers/audio';
import { sseData } from '../../activities/providers/sse';
import {
  CreateSpeechRequest,
  MAX_AUDIO_BYTES,
  SPEECH_CONTENT_TYPES,
  SPEECH_MODEL,
  TRANSCRIPTION_MODEL,
  TranscriptionForm,
  TranscriptResponse,
  TRANSLATION_MODEL,
  TranslationForm,
} from '../../schema/audio';
import type { Config } from '../../schema/config';
import { AppError } from '../../schema/errors';
import type { AppContext } from '../context';
import { formFields, readForm, type Form } from '../multipart';
import { defineRoute, type RouteSpec } from '../route';
import { abortOnDisconnect, unlessClientGone } from './chat-shared';
import { startEventStream, streamError } from './chat-sse';
import { providerModel } from './embeddings';

/** The speech request's model name, checked. @throws AppError model_not_found */
export const speechModel = (config: Config, body: { model?: string }): string =>
  providerModel(body.model, SPEECH_MODEL, config.openai.speechModel, 'speech requests');

const NOT_FORM = 'Send the audio as multipart/form-data: the file in field "file", the other fields beside it.';
const AUDIO_TYPES = 'flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav or webm';

/** The provider's answer type: lower-case, without parameters ('' when it sent none). */
const typeOf = (res: Response) => (res.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();

const malformed = (what: string) => new AppError('upstream_error', `The ${what} provider sent a malformed answer.`);

/** A provider answer that failed while it was read, as the error it is: its time-out, else a broken connection. */
function brokenAnswer(what: string, err: unknown): AppError {
  if (err instanceof AppError) return err;
  return (err as Error).name === 'TimeoutError'
    ? new AppError('upstream_timeout', `The ${what} provider did not finish in time (SVC_AUDIO_TIMEOUT_MS).`)
    : new AppError('upstream_error', `The ${what} provider's answer broke off.`);
}

/** Token usage the provider reported (OpenAI's `input_tokens`/`output_tokens`), metered for this request. */
function meterTokens(ctx: AppContext, usage: unknown): void {
  const u = usage as { input_tokens?: unknown; output_tokens?: unknown } | null | undefined;
  if (!ctx.state.usage || !u || typeof u !== 'object') return;
  if (Number.isSafeInteger(u.input_tokens)) ctx.state.usage.promptTokens = Math.max(0, u.input_tokens as number);
  if (Number.isSafeInteger(u.output_tokens)) ctx.state.usage.completionTokens = Math.max(0, u.output_tokens as number);
}

/**
 * Passes the provider's server-sent events through as they come (each event's data unchanged, comments dropped),
 * metering the usage of the event `last` names. A failure after the stream began ends it with an error event
 * (`{type: "error", error}`, which OpenAI's SDKs raise); the client going away aborts the provider's answer.
 */
function relayEvents(ctx: AppContext, res: Response, what: string, abort: AbortController, last: string): void {
  const body = res.body as WebReadableStream<Uint8Array>;
  const out = startEventStream(ctx);
  const send = (data: string) => out.write(`${data.replace(/^/gm, 'data: ')}\n\n`);
  void (async () => {
    try {
      for await (const data of sseData(body)) {
        if (abort.signal.aborted) return;
        if (data.includes(`"${last}"`)) {
          const event = JSON.parse(data) as { type?: unknown; usage?: unknown } | null;
          if (event?.type === last) meterTokens(ctx, event.usage);
        }
        send(data);
      }
    } catch (err) {
      if (!abort.signal.aborted)
        send(JSON.stringify({ type: 'error', error: streamError(ctx, brokenAnswer(what, err)) }));
    } finally {
      out.end();
    }
  })();
}

/**
 * `POST /v1/audio/speech`: the provider's audio streamed through as it comes (the content type of the format asked
 * for), or its SSE events. A provider answering anything else (JSON, a page) is 502 before anything is sent; one that
 * breaks off mid-audio has the connection cut, so that no client takes a truncated file for a whole one.
 */
async function speech(ctx: AppContext, body: CreateSpeechRequest): Promise<void> {
  speechModel(ctx.deps.config, body);
  ctx.state.usage = { lane: SPEECH_MODEL, promptTokens: 0, completionTokens: 0, estimated: false };
  const abort = abortOnDisconnect(ctx);
  const res = await unlessClientGone(abort, () => requestSpeech(ctx.deps.config, body, abort.signal));
  const sse = body.stream_format === 'sse';
  const type = typeOf(res);
  const fits = sse
    ? type === 'text/event-stream'
    : type === '' || type.startsWith('audio/') || type === 'application/octet-stream';
  if (!fits || !res.body) {
    await res.body?.cancel().catch(() => undefined);
    throw malformed('speech');
  }
  if (sse) return relayEvents(ctx, res, 'speech', abort, 'speech.audio.done');
  ctx.req.socket.setNoDelay(true);
  ctx.type = SPEECH_CONTENT_TYPES[body.response_format ?? 'mp3'];
  ctx.set('Cache-Control', 'no-store');
  ctx.body = Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
}

/** A list field of a form, sent as repeated `name[]` (OpenAI's SDKs) or `name`. */
const listField = (form: Form, name: string) => form.lists[`${name}[]`] ?? form.lists[name];

/**
 * `POST /v1/audio/transcriptions` and `/v1/audio/translations`: the form read and checked (the file by its bytes,
 * within SVC_UPLOAD_LIMIT and OpenAI's 25 MB), sent on as OpenAI's form; the answer as the format asks (json and
 * verbose_json as JSON, checked to carry the text; text, srt and vtt as text/plain), or the provider's SSE events
 * when a transcription asked for `stream` and the provider streams.
 */
async function transcript(ctx: AppContext, kind: 'transcriptions' | 'translations'): Promise<unknown> {
  const { config } = ctx.deps;
  const transcribe = kind === 'transcriptions';
  const what = transcribe ? 'transcription' : 'translation';
  const form = await readForm(ctx, Math.min(config.uploadLimit, MAX_AUDIO_BYTES), { file: 1 }, NOT_FORM);
  const given = {
    ...form.fields,
    timestamp_granularities: listField(form, 'timestamp_granularities'),
    include: listField(form, 'include'),
  };
  const fields: TranscriptionForm | TranslationForm = transcribe
    ? formFields(TranscriptionForm, given)
    : formFields(TranslationForm, given);
  const lane = transcribe ? TRANSCRIPTION_MODEL : TRANSLATION_MODEL;
  providerModel(
    fields.model,
    lane,
    transcribe ? config.openai.transcriptionModel : config.openai.translationModel,
    kind,
  );
  const upload = form.files.file?.[0];
  if (!upload)
    throw new AppError('invalid_request', 'Send the audio in multipart field "file".', {
      details: [{ path: 'body.file', message: 'required' }],
    });
  const file = await sniffAudio(upload.bytes);
  if (!file)
    throw new AppError('unsupported_media_type', `body.file: not ${AUDIO_TYPES} audio (checked from its bytes).`, {
      details: [{ path: 'body.file', message: `not ${AUDIO_TYPES} audio` }],
    });
  ctx.state.usage = { lane, promptTokens: 0, completionTokens: 0, estimated: false };
  const abort = abortOnDisconnect(ctx);
  const { model: _model, ...sent } = fields;
  const res = await unlessClientGone(abort, () => requestTranscript(config, kind, file, sent, abort.signal));
  const type = typeOf(res);
  if ('stream' in sent && sent.stream === 'true' && type === 'text/event-stream' && res.body) {
    relayEvents(ctx, res, what, abort, 'transcript.text.done');
    return undefined;
  }
  const text = await unlessClientGone(abort, () =>
    res.text().catch((err: unknown) => Promise.reject(abort.signal.aborted ? err : brokenAnswer(what, err))),
  );
  const format = fields.response_format ?? 'json';
  if (format !== 'json' && format !== 'verbose_json') {
    if (type === 'application/json' || type === 'text/event-stream') throw malformed(what);
    ctx.type = 'text/plain; charset=utf-8';
    return text;
  }
  let answer: TranscriptResponse | undefined;
  try {
    answer = TranscriptResponse.parse(JSON.parse(text));
  } catch {
    throw malformed(what);
  }
  if (answer.usage?.type === 'tokens') meterTokens(ctx, answer.usage);
  return answer;
}

const PROVIDER_FAILURES = {
  404: 'Unknown model (model_not_found).',
  429: 'The audio provider is rate limiting (Retry-After).',
  502: 'The audio provider failed, has no such endpoint, or answered malformed.',
  503: 'No audio provider is configured (OPENAI_BASE_URL).',
  504: 'The audio provider timed out (SVC_AUDIO_TIMEOUT_MS).',
};
const FORM_REFUSALS = {
  413: 'The file is over SVC_UPLOAD_LIMIT (or OpenAI’s 25 MB).',
  415: `Not multipart; a file that is not ${AUDIO_TYPES} audio (by its bytes).`,
};

/** OpenAI's Audio API (speech, transcriptions, translations) over the configured provider's. */
export function audioRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/audio/speech',
      access: { scope: 'runtime:chat' },
      summary: `OpenAI-compatible text to speech ('${SPEECH_MODEL}': the provider's SVC_SPEECH_MODEL): the audio streamed as the provider sends it, or its SSE events (stream_format sse).`,
      tags: ['models'],
      metered: true,
      body: CreateSpeechRequest,
      produces: [...new Set(Object.values(SPEECH_CONTENT_TYPES)), 'text/event-stream'],
      responses: PROVIDER_FAILURES,
      example: { model: SPEECH_MODEL, input: 'Hello there.', voice: 'alloy', response_format: 'mp3' },
      handler: (ctx: AppContext, { body }) => speech(ctx, body),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/audio/transcriptions',
      access: { scope: 'runtime:chat' },
      summary: `OpenAI-compatible transcription ('${TRANSCRIPTION_MODEL}': the provider's SVC_TRANSCRIPTION_MODEL): multipart file (${AUDIO_TYPES}, by its bytes) and fields; json, verbose_json, text, srt, vtt, or the provider's SSE events (stream).`,
      tags: ['models'],
      metered: true,
      consumes: 'multipart/form-data',
      body: TranscriptionForm,
      response: TranscriptResponse,
      produces: ['application/json', 'text/plain', 'text/event-stream'],
      responses: { ...FORM_REFUSALS, ...PROVIDER_FAILURES },
      handler: (ctx: AppContext) => transcript(ctx, 'transcriptions'),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/audio/translations',
      access: { scope: 'runtime:chat' },
      summary: `OpenAI-compatible translation into English ('${TRANSLATION_MODEL}': the provider's SVC_TRANSLATION_MODEL): multipart file (${AUDIO_TYPES}, by its bytes) and fields; json, verbose_json, text, srt or vtt.`,
      tags: ['models'],
      metered: true,
      consumes: 'multipart/form-data',
      body: TranslationForm,
      response: TranscriptResponse,
      produces: ['application/json', 'text/plain'],
      responses: { ...FORM_REFUSALS, ...PROVIDER_FAILURES },
      handler: (ctx: AppContext) => transcript(ctx, 'translations'),
    }),
  ];
}
