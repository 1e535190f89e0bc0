import { z } from 'zod';
import { generateImages } from '../../activities/media/generate';
import { imageByToken, storeImageLink } from '../../activities/store/images';
import { createHash } from 'node:crypto';
import { notFound } from '../../schema/errors';
import { ImageGenerateBody, ImagesResponse } from '../../schema/images';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';

/** The service's own base URL for links (SVC_PUBLIC_URL, else the listening address). */
function publicBase(ctx: AppContext): string {
  const { publicUrl, host, port } = ctx.deps.config;
  const configured = publicUrl?.replace(/\/+$/, '').replace(/\/v1$/, '');
  if (configured) return configured;
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

export function imagesRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/images/generations',
      access: { scope: 'runtime:chat' },
      tags: ['images'],
      body: ImageGenerateBody,
      response: ImagesResponse,
      summary:
        'OpenAI-compatible image generation through the images lane. response_format url stores the image (per tenant, content-addressed) behind an unguessable expiring link.',
      responses: { 502: 'Provider error', 503: 'No image provider', 504: 'Provider timeout' },
      example: { prompt: 'A lighthouse at dusk, watercolour', n: 1, size: '1024x1024', response_format: 'url' },
      handler: async (ctx: AppContext, { body }) => {
        const images = await generateImages(ctx.deps.config, {
          prompt: body.prompt,
          n: body.n ?? 1,
          size: body.size ?? undefined,
          quality: body.quality ?? undefined,
          style: body.style ?? undefined,
        });
        const created = Math.floor(Date.now() / 1000);
        if (body.response_format === 'b64_json') {
          return {
            created,
            data: images.map((i) => ({
              b64_json: i.bytes.toString('base64'),
              ...(i.revisedPrompt ? { revised_prompt: i.revisedPrompt } : {}),
            })),
          };
        }
        const tenantId = principalOf(ctx).tenantId;
        const data = [];
        for (const i of images) {
          const sha256 = createHash('sha256').update(i.bytes).digest('hex');
          const link = await storeImageLink(ctx.deps.db, {
            tenantId,
            sha256,
            contentType: i.contentType,
            bytes: i.bytes,
            ttlSeconds: ctx.deps.config.media.imageUrlTtlSeconds,
          });
          data.push({
            url: `${publicBase(ctx)}/v1/images/files/${link.token}`,
            ...(i.revisedPrompt ? { revised_prompt: i.revisedPrompt } : {}),
          });
        }
        return { created, data };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/images/files/:token',
      access: 'public',
      tags: ['images'],
      params: z.object({ token: z.string().min(1).max(64) }),
      produces: ['image/png', 'image/jpeg', 'image/webp', 'image/gif'],
      summary: 'A generated image behind its unguessable link, until the link expires (then 404).',
      handler: async (ctx: AppContext, { params }) => {
        const img = await imageByToken(ctx.deps.db, params.token);
        if (!img) throw notFound('Image');
        const left = Math.max(0, Math.floor((Date.parse(img.expiresAt) - Date.now()) / 1000));
        ctx.set('Cache-Control', `private, max-age=${left}`);
        ctx.set('X-Content-Type-Options', 'nosniff');
        ctx.type = img.contentType;
        return img.bytes;
      },
    }),
  ];
}
