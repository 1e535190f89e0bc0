import { z } from 'zod';
import { defineTool } from './types';

/** Token estimate without a tokenizer: the mean of a character-based and a word-based estimate. */
export function estimateTokenCount(text: string): number {
  if (!text) return 0;
  const byChars = text.length / 4;
  const byWords = text.split(/\s+/).filter(Boolean).length * 1.33;
  return Math.max(1, Math.round((byChars + byWords) / 2));
}

export const tokenEstimate = defineTool({
  name: 'token_estimate',
  description: 'Estimates how many model tokens a text uses (about 4 characters or 0.75 words a token).',
  input: z.object({ text: z.string().max(500_000) }),
  run({ text }) {
    return { tokens: estimateTokenCount(text), characters: text.length };
  },
});
