import { z } from 'zod';

const SOURCES = ['image_url', 'image_base64', 'image_path'] as const;

export const VisionAnalyzeBody = z
  .object({
    image_url: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe('Public http(s) URL; fetched by the service through its fetch guard.'),
    image_base64: z.string().min(1).optional().describe('The image bytes in base64 (a data: URL prefix is accepted).'),
    image_path: z.string().min(1).max(1024).optional().describe('Path inside SVC_IMAGE_ROOT on the server.'),
    prompt: z.string().min(1).max(4000).optional().describe('Steers the description.'),
    save_memory: z.boolean().default(false).describe('Store the result as a memory fragment with provenance "seen".'),
  })
  .strict()
  .superRefine((b, ctx) => {
    const given = SOURCES.filter((k) => b[k] !== undefined);
    if (given.length === 1) return;
    const message = `give exactly one of image_url, image_base64, image_path (${given.length ? `got ${given.join(' and ')}` : 'got none'})`;
    for (const k of given.length ? given : SOURCES) ctx.addIssue({ code: 'custom', path: [k], message });
  })
  .meta({ id: 'VisionAnalyze' });

/** What the model must answer (sent as the JSON schema of the response format). */
export const VisionAnswer = z.object({
  description: z.string().min(1).max(8000),
  tags: z.array(z.string().min(1).max(100)).max(50),
});

export const VisionResult = z
  .object({
    description: z.string(),
    tags: z.array(z.string()),
    model: z.string(),
    image_sha256: z.string().describe('sha256 of the image bytes as received.'),
    memory_id: z.string().optional().describe('The stored memory fragment, with save_memory.'),
  })
  .meta({ id: 'VisionResult' });
