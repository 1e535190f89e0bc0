import { z } from 'zod';

/** The public ids of the audio models (the provider's are deployment configuration: SVC_SPEECH_MODEL and the others). */
export const SPEECH_MODEL = 'svc-speech';
export const TRANSCRIPTION_MODEL = 'svc-transcribe';
export const TRANSLATION_MODEL = 'svc-translate';

/** OpenAI's limit on the text one speech request reads (and on its instructions). */
export const MAX_SPEECH_CHARS = 4096;
/** OpenAI's limit on an audio file to transcribe or translate (SVC_UPLOAD_LIMIT applies when lower). */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;

/** The audio formats speech is answered in, and the content type each is sent with. */
export const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];
export const SPEECH_CONTENT_TYPES: Record<SpeechFormat, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg; codecs=opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  // 24 kHz, 16-bit signed little-endian, mono, no header (OpenAI's pcm).
  pcm: 'audio/pcm',
};

const model = (publicId: string, setting: string) =>
  z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(`'${publicId}' (the default) or the configured upstream model's name (${setting}).`);

/** OpenAI's `CreateSpeechRequest`. */
export const CreateSpeechRequest = z
  .object({
    model: model(SPEECH_MODEL, 'SVC_SPEECH_MODEL'),
    input: z.string().min(1).max(MAX_SPEECH_CHARS).describe('The text to read aloud (at most 4,096 characters).'),
    voice: z
      .union([z.string().min(1).max(100), z.object({ id: z.string().min(1).max(200) })], {
        error: 'a voice name (e.g. "alloy") or a custom voice {id}',
      })
      .describe("A voice name the provider knows (OpenAI's: alloy, ash, coral, …) or a custom voice {id}."),
    instructions: z.string().max(MAX_SPEECH_CHARS).optional().describe('How to speak (models that take it).'),
    response_format: z.enum(SPEECH_FORMATS).optional().describe('mp3 (the default), opus, aac, flac, wav or pcm.'),
    speed: z.number().min(0.25).max(4).optional(),
    stream_format: z
      .enum(['audio', 'sse'])
      .optional()
      .describe('audio (the default): the bytes as they come; sse: speech.audio.delta events, then speech.audio.done.'),
  })
  .meta({ id: 'CreateSpeechRequest' });
export type CreateSpeechRequest = z.output<typeof CreateSpeechRequest>;

/** A number in a form field (sent as text). */
const formNumber = (min: number, max: number) => z.coerce.number().min(min).max(max);
const prompt = z.string().max(MAX_SPEECH_CHARS).optional().describe('Text to guide the style or continue a segment.');
const temperature = formNumber(0, 1).optional();
const TEXT_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
export type TranscriptFormat = (typeof TEXT_FORMATS)[number];
const responseFormat = z
  .enum(TEXT_FORMATS)
  .optional()
  .describe('json (the default) and verbose_json answer JSON; text, srt and vtt answer text/plain.');

/** OpenAI's `CreateTranscriptionRequest` text fields (the audio, `file`, is read beside them; lists as `name[]`). */
export const TranscriptionForm = z
  .object({
    model: model(TRANSCRIPTION_MODEL, 'SVC_TRANSCRIPTION_MODEL'),
    language: z
      .string()
      .regex(/^[A-Za-z]{2,3}$/, 'an ISO-639-1 language code, e.g. en')
      .optional()
      .describe('The language spoken (ISO-639-1).'),
    prompt,
    response_format: responseFormat,
    temperature,
    timestamp_granularities: z
      .array(z.enum(['word', 'segment']))
      .max(2)
      .optional()
      .describe('word and/or segment, with response_format verbose_json (sent as timestamp_granularities[]).'),
    include: z
      .array(z.enum(['logprobs']))
      .max(1)
      .optional()
      .describe('logprobs (sent as include[]).'),
    stream: z
      .enum(['true', 'false'], { error: 'true or false' })
      .optional()
      .describe("true: the provider's transcript.text.delta and transcript.text.done events (SSE)."),
  })
  .refine((f) => !f.timestamp_granularities?.length || f.response_format === 'verbose_json', {
    path: ['timestamp_granularities'],
    message: 'takes response_format verbose_json',
  })
  .meta({ id: 'CreateTranscriptionRequest' });
export type TranscriptionForm = z.output<typeof TranscriptionForm>;

/** OpenAI's `CreateTranslationRequest` text fields (the audio, `file`, is read beside them). */
export const TranslationForm = z
  .object({
    model: model(TRANSLATION_MODEL, 'SVC_TRANSLATION_MODEL'),
    prompt,
    response_format: responseFormat,
    temperature,
  })
  .meta({ id: 'CreateTranslationRequest' });
export type TranslationForm = z.output<typeof TranslationForm>;

/**
 * A transcription or translation as JSON (OpenAI's `json` and `verbose_json` forms): the text, and what else the
 * provider gave (language, duration, segments, words, usage, logprobs) as it gave it.
 */
export const TranscriptResponse = z
  .looseObject({
    text: z.string(),
    language: z.string().optional(),
    duration: z.number().optional(),
    segments: z.array(z.looseObject({})).optional(),
    words: z.array(z.looseObject({})).optional(),
    usage: z.looseObject({ type: z.string() }).optional(),
  })
  .meta({ id: 'TranscriptResponse' });
export type TranscriptResponse = z.output<typeof TranscriptResponse>;
