import { z } from 'zod';
import { MAX_CHOICES, MAX_MESSAGE_CHARS, nullable, Sampling, Usage } from './chat';

/** OpenAI's default `max_tokens` for a text completion (the legacy endpoint's: short continuations). */
export const COMPLETION_DEFAULT_MAX_TOKENS = 16;

const TOKEN_PROMPTS =
  'token-id prompts are not taken here (each lane has its own tokenizer): send the text, or an array of texts';

/**
 * A prompt: a text, or 1 to 8 texts. Checked by hand so that each refusal says what is wrong (a union would answer
 * "invalid input" for a token-id prompt).
 */
const Prompt = z
  .unknown()
  .transform((v, ctx): string | string[] => {
    const text = (s: unknown, path: number[]) => {
      if (typeof s !== 'string') {
        ctx.addIssue({
          code: 'custom',
          path,
          message:
            typeof s === 'number' || Array.isArray(s)
              ? TOKEN_PROMPTS
              : s === undefined && path.length === 0
                ? 'required: a text, or an array of texts'
                : 'a text',
        });
        return false;
      }
      if (s.length > MAX_MESSAGE_CHARS) {
        ctx.addIssue({ code: 'custom', path, message: `at most ${MAX_MESSAGE_CHARS} characters` });
        return false;
      }
      return true;
    };
    if (!Array.isArray(v)) return text(v, []) ? (v as string) : z.NEVER;
    if (v.length === 0 || v.length > MAX_CHOICES) {
      ctx.addIssue({ code: 'custom', message: `1 to ${MAX_CHOICES} prompts` });
      return z.NEVER;
    }
    if (typeof v[0] === 'number' || Array.isArray(v[0])) {
      ctx.addIssue({ code: 'custom', message: TOKEN_PROMPTS });
      return z.NEVER;
    }
    return v.every((s, i) => text(s, [i])) ? (v as string[]) : z.NEVER;
  })
  .describe(`A text, or 1 to ${MAX_CHOICES} texts (each gets n choices).`);

/**
 * OpenAI's legacy text completion request (`POST /v1/completions`). `prompt` is a text or up to 8 texts; every
 * prompt gets `n` choices, at most 8 in all (each is a lane call). Fields the chat lanes cannot honour are refused
 * with what to do instead (`suffix`, `best_of` above `n`, `echo` with `logprobs`, token-id prompts).
 */
export const CreateCompletionRequest = z
  .object({
    model: z.string().min(1).max(100).describe('A lane id of GET /v1/models (required, as OpenAI).'),
    prompt: Prompt,
    suffix: nullable(
      z
        .string()
        .max(0, 'fill-in-the-middle (suffix) is not taken here: the lanes are chat models; send the text before only'),
    ),
    echo: nullable(z.boolean()).describe('true: each choice starts with its prompt.'),
    best_of: nullable(z.number().int().min(0).max(20)).describe(
      'Taken only when it is n (or 1): choices are not ranked here.',
    ),
    logprobs: nullable(z.number().int().min(0).max(5)).describe(
      "The chosen tokens' log probabilities (and this many alternatives each), in the legacy format, from the lane's.",
    ),
    max_tokens: nullable(z.number().int().min(1).max(65_536)).describe(
      `Tokens a choice may have (default ${COMPLETION_DEFAULT_MAX_TOKENS}, as OpenAI's).`,
    ),
    temperature: Sampling.temperature,
    top_p: Sampling.top_p,
    n: Sampling.n,
    stop: Sampling.stop,
    presence_penalty: Sampling.presence_penalty,
    frequency_penalty: Sampling.frequency_penalty,
    seed: Sampling.seed,
    logit_bias: Sampling.logit_bias,
    user: Sampling.user,
    stream: Sampling.stream,
    stream_options: Sampling.stream_options,
  })
  .superRefine((b, ctx) => {
    const prompts = typeof b.prompt === 'string' ? 1 : b.prompt.length;
    const n = b.n ?? 1;
    if (prompts * n > MAX_CHOICES)
      ctx.addIssue({
        code: 'custom',
        path: ['n'],
        message: `at most ${MAX_CHOICES} choices in all (prompts × n; each is a lane call)`,
      });
    if (b.best_of !== undefined && b.best_of !== 0 && b.best_of !== 1 && b.best_of !== n)
      ctx.addIssue({
        code: 'custom',
        path: ['best_of'],
        message: 'choices are not ranked here: send best_of equal to n (or leave it out) and pick among the n',
      });
    if (b.echo && b.logprobs !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['logprobs'],
        message: "the prompt's log probabilities are not given by the lanes: leave out echo or logprobs",
      });
  })
  .meta({ id: 'CreateCompletionRequest' });
export type CreateCompletionRequest = z.output<typeof CreateCompletionRequest>;

const LegacyLogprobs = z
  .object({
    tokens: z.array(z.string()),
    token_logprobs: z.array(z.number()),
    top_logprobs: z.array(z.record(z.string(), z.number())),
    text_offset: z.array(z.number().int()),
  })
  .nullable();

export const CompletionResponse = z
  .object({
    id: z.string(),
    object: z.literal('text_completion'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        text: z.string(),
        index: z.number().int(),
        logprobs: LegacyLogprobs,
        finish_reason: z.enum(['stop', 'length', 'content_filter']),
      }),
    ),
    usage: Usage,
  })
  .meta({ id: 'CompletionResponse' });
