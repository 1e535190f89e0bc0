import { fileTypeFromBuffer } from 'file-type';
import type { CreateSpeechRequest } from '../../schema/audio';
import type { Config } from '../../schema/config';
import { openProvider } from './provider-post';

/** An audio file to transcribe: its bytes, and its type as read from them. */
export interface AudioFile {
  bytes: Buffer;
  /** The extension the provider is told (it may go by the name): one of OpenAI's. */
  ext: string;
  contentType: string;
}

/**
 * The audio types OpenAI transcribes (flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav, webm), by file-type's name for
 * them, with the extension sent on (Ogg Vorbis and Opus are both `.ogg`, an MPEG program stream `.mpeg`).
 */
const AUDIO_EXTENSIONS: Record<string, string> = {
  flac: 'flac',
  mp3: 'mp3',
  mp4: 'mp4',
  m4a: 'm4a',
  ogg: 'ogg',
  oga: 'ogg',
  opus: 'ogg',
  wav: 'wav',
  webm: 'webm',
  mpg: 'mpeg',
};

/** The audio file these bytes are, by their signature (never the name or the declared type); undefined if none. */
export async function sniffAudio(bytes: Buffer): Promise<AudioFile | undefined> {
  const found = await fileTypeFromBuffer(bytes);
  const ext = found && AUDIO_EXTENSIONS[found.ext];
  return ext ? { bytes, ext, contentType: found.mime } : undefined;
}

/**
 * Asks the configured provider to read `body.input` aloud (OpenAI `POST /audio/speech`, model SVC_SPEECH_MODEL):
 * its answer, the audio (or its SSE events) not yet read, within SVC_AUDIO_TIMEOUT_MS in all.
 * @throws AppError as openProvider (a provider without the endpoint: 502 saying so)
 */
export function requestSpeech(config: Config, body: CreateSpeechRequest, signal: AbortSignal): Promise<Response> {
  const { model: _model, ...rest } = body;
  return openProvider(config, '/audio/speech', { ...rest, model: config.openai.speechModel }, 'speech', {
    signal,
    timeoutMs: config.openai.audioTimeoutMs,
    missing:
      'The configured provider has no speech endpoint (/audio/speech); point OPENAI_BASE_URL at one that does, or set SVC_SPEECH_MODEL to a model it serves.',
  });
}

/**
 * Sends an audio file to the configured provider's `/audio/transcriptions` or `/audio/translations` as OpenAI's
 * multipart form: the file (named by its type), the configured model (SVC_TRANSCRIPTION_MODEL or
 * SVC_TRANSLATION_MODEL) and `fields` (lists as repeated `name[]` fields, as OpenAI's SDKs send them). Resolves with
 * the provider's answer unread, within SVC_AUDIO_TIMEOUT_MS in all.
 * @throws AppError as openProvider (a provider without the endpoint: 502 saying so)
 */
export function requestTranscript(
  config: Config,
  kind: 'transcriptions' | 'translations',
  file: AudioFile,
  fields: Record<string, string | number | string[] | undefined>,
  signal: AbortSignal,
): Promise<Response> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(file.bytes)], { type: file.contentType }), `audio.${file.ext}`);
  const transcribe = kind === 'transcriptions';
  form.append('model', transcribe ? config.openai.transcriptionModel : config.openai.translationModel);
  for (const [name, value] of Object.entries(fields)) {
    if (Array.isArray(value)) for (const v of value) form.append(`${name}[]`, v);
    else if (value !== undefined) form.append(name, String(value));
  }
  const what = transcribe ? 'transcription' : 'translation';
  const setting = transcribe ? 'SVC_TRANSCRIPTION_MODEL' : 'SVC_TRANSLATION_MODEL';
  return openProvider(config, `/audio/${kind}`, form, what, {
    signal,
    timeoutMs: config.openai.audioTimeoutMs,
    missing: `The configured provider has no ${what} endpoint (/audio/${kind}); point OPENAI_BASE_URL at one that does, or set ${setting} to a model it serves.`,
  });
}
