import { lazyModule } from '../lazy-module';
import { sharp } from '../media/image-input';
import type { ContentPartIn, ModelRequest } from './types';

/** OpenAI's o200k_base encoding (gpt-4o, gpt-4.1, o-series, gpt-5): 33 MB of heap, loaded on the first count. */
const tokenizer = lazyModule(
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on the first count (see lazyModule)
  () => require('gpt-tokenizer/encoding/o200k_base') as typeof import('gpt-tokenizer/encoding/o200k_base'),
);

/**
 * Special tokens' text (`<|endoftext|>`) in a client's text counted and encoded as the plain text it is (the tokenizer
 * refuses it by default, which made such a request fail).
 */
const PLAIN = { disallowedSpecial: new Set<string>() };

/** Tokens of a message's framing and of the reply's priming (OpenAI's published counting for chat models). */
const PER_MESSAGE = 3;
const PRIMING = 3;

/**
 * OpenAI's token charge for an image: 85 at low detail; otherwise fitted within 2048×2048, its shortest side brought
 * down to 768, then 170 a 512-pixel tile on top of the 85.
 */
export function imageTokens(width: number, height: number, detail: 'auto' | 'low' | 'high' = 'auto'): number {
  if (detail === 'low' || width <= 0 || height <= 0) return 85;
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shrink = Math.min(1, 768 / Math.min(w, h));
  w *= shrink;
  h *= shrink;
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}

/** Characters counted in one go before the event loop gets a turn (~3 ms of tokenizing). */
const SLICE = 65_536;

/**
 * Runs `each` over a text a slice at a time with a turn of the event loop between slices, so that a text of
 * megabytes does not hold every other request up for a second. Slices end at a line break where there is one (BPE
 * merges never cross a line break's pre-token), so what is done slice by slice equals what the whole text gives.
 */
async function bySlices(text: string, each: (s: string) => void): Promise<void> {
  if (text.length <= SLICE) return each(text);
  for (let at = 0; at < text.length;) {
    let end = Math.min(text.length, at + SLICE);
    if (end < text.length) {
      const nl = text.lastIndexOf('\n', end);
      if (nl > at) end = nl + 1;
    }
    each(text.slice(at, end));
    at = end;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** A text's tokens, counted a slice at a time (`bySlices`). */
async function countText(text: string, count: (s: string) => number): Promise<number> {
  let n = 0;
  await bySlices(text, (s) => void (n += count(s)));
  return n;
}

/** A text's o200k token ids, encoded a slice at a time (`bySlices`). */
export async function encodeText(text: string): Promise<number[]> {
  const { encode } = tokenizer();
  const out: number[] = [];
  await bySlices(text, (s) => {
    for (const t of encode(s, PLAIN)) out.push(t);
  });
  return out;
}

/** Token ids back to text (o200k). */
export const decodeTokens = (tokens: number[]): string => tokenizer().decode(tokens);

async function partTokens(p: ContentPartIn, count: (s: string) => number): Promise<number> {
  if (p.type === 'text') return countText(p.text, count);
  const url = p.image_url.url;
  const comma = url.indexOf(',');
  if (!url.startsWith('data:') || comma < 0) return imageTokens(0, 0);
  const meta = await sharp()(Buffer.from(url.slice(comma + 1), 'base64'))
    .metadata()
    .catch(() => undefined);
  return imageTokens(meta?.width ?? 0, meta?.height ?? 0, p.image_url.detail);
}

/**
 * The input tokens of a model request as OpenAI's models count them: every message with its framing, images by
 * their size, the assistant's tool calls, the tool definitions and a structured-output schema (those two as their
 * JSON, an approximation of the model's own rendering). Exact for OpenAI's o200k models on plain messages; for
 * other lanes' models a close estimate (their tokenizers differ).
 */
export async function countInputTokens(req: Pick<ModelRequest, 'messages' | 'tools' | 'extra'>): Promise<number> {
  const tokens = tokenizer();
  const countTokens = (s: string) => tokens.countTokens(s, PLAIN);
  let n = PRIMING;
  for (const m of req.messages) {
    n += PER_MESSAGE + countTokens(m.role);
    if (m.name) n += 1 + countTokens(m.name);
    if (typeof m.content === 'string') n += await countText(m.content, countTokens);
    else if (Array.isArray(m.content)) for (const p of m.content) n += await partTokens(p, countTokens);
    for (const c of m.tool_calls ?? [])
      n += PER_MESSAGE + countTokens(c.function.name) + countTokens(c.function.arguments);
  }
  if (req.tools?.length) n += countTokens(JSON.stringify(req.tools));
  const format = req.extra?.response_format;
  if (format && typeof format === 'object') n += countTokens(JSON.stringify(format));
  return n;
}
