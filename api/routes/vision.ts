import { loadImage } from '../../activities/media/image-input';
import { describeImage } from '../../activities/media/vision';
import { addSeenMemory } from '../../activities/store/seen-memories';
import { VisionAnalyzeBody, VisionResult } from '../../schema/vision';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';

export function visionRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/vision/analyze',
      access: { scope: 'runtime:chat' },
      tags: ['vision'],
      body: VisionAnalyzeBody,
      response: VisionResult,
      summary:
        'Describe an image (exactly one of image_url, image_base64, image_path): type checked from the bytes, normalised (EXIF stripped, longest side capped), then the vision lane answers { description, tags, model }.',
      responses: {
        413: 'Image larger than the limit',
        415: 'Not PNG, JPEG, WebP or GIF',
        502: 'Provider error',
        503: 'No vision provider',
        504: 'Provider timeout',
      },
      example: { image_url: 'https://example.com/cat.jpg', prompt: 'What animal is this?', save_memory: true },
      handler: async (ctx: AppContext, { body }) => {
        const img = await loadImage(body, ctx.deps.config);
        const answer = await describeImage(ctx.deps.config, img, body.prompt);
        const out = { ...answer, image_sha256: img.sha256 };
        if (!body.save_memory) return out;
        const content = `${answer.description}${answer.tags.length ? `\nTags: ${answer.tags.join(', ')}` : ''}`;
        const memoryId = await addSeenMemory(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          content,
          imageSha256: img.sha256,
        });
        return { ...out, memory_id: memoryId };
      },
    }),
  ];
}
