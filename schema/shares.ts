import { z } from 'zod';

export const ShareBody = z
  .object({
    title: z.string().trim().min(1).max(300),
    content: z
      .string()
      .min(1)
      .max(500_000)
      .describe('The artifact; sanitised on render (no scripts, event handlers or javascript: links).'),
    format: z.enum(['markdown', 'html']).default('markdown'),
  })
  .meta({ id: 'ShareCreateRequest' });

export const ShareRecord = z
  .object({
    id: z.string().describe('Unguessable id: whoever has the link can read the page.'),
    url: z.string().describe('Public address of the rendered page (no /v1 prefix).'),
    title: z.string(),
    format: z.enum(['markdown', 'html']),
    created_at: z.string(),
  })
  .meta({ id: 'Share' });

export const ShareList = z
  .object({ data: z.array(ShareRecord), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'ShareList' });
