import { z } from 'zod';
import { nullable } from './chat';

/** The public id of the embeddings model (the upstream's model is deployment configuration, never shown). */
export const EMBEDDING_MODEL = 'svc-embed';
/** Inputs one request may carry, and the characters of one text (OpenAI: 2048 inputs, 8192 tokens each). */
export const MAX_EMBEDDING_INPUTS = 2048;
export const MAX_EMBEDDING_CHARS = 100_000;

const Text = z.string().min(1, 'must not be empty').max(MAX_EMBEDDING_CHARS);
const Tokens = z
  .array(
    z
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1),
  )
  .min(1, 'must not be empty')
  .max(8192);

export const CreateEmbeddingRequest = z
  .object({
    input: z
      .union([
        Text,
        z.array(Text).min(1).max(MAX_EMBEDDING_INPUTS),
        Tokens,
        z.array(Tokens).min(1).max(MAX_EMBEDDING_INPUTS),
      ])
      .describe('A text, texts, a text as token ids, or several as token ids (OpenAI’s four forms).'),
    model: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(`'${EMBEDDING_MODEL}' (the default) or the configured upstream model's name.`),
    encoding_format: nullable(z.enum(['float', 'base64'])).describe(
      'float (default): arrays of numbers; base64: little-endian float32, as OpenAI encodes them.',
    ),
    dimensions: nullable(z.number().int().min(1).max(8192)).describe(
      "Passed to the provider; a vector of any other length is the provider's error (502).",
    ),
    user: nullable(z.string().max(256)),
  })
  .meta({ id: 'CreateEmbeddingRequest' });
export type CreateEmbeddingRequest = z.output<typeof CreateEmbeddingRequest>;

export const EmbeddingList = z
  .object({
    object: z.literal('list'),
    data: z.array(
      z.object({
        object: z.literal('embedding'),
        index: z.number().int(),
        embedding: z.union([z.array(z.number()), z.string()]),
      }),
    ),
    model: z.string(),
    usage: z.object({ prompt_tokens: z.number().int(), total_tokens: z.number().int() }),
  })
  .meta({ id: 'EmbeddingList' });
