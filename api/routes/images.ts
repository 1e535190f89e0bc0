import { z } from 'zod';
import {
  editImages,
  generateImages,
  imageVariations,
  type GeneratedImage,
  type ImageFile,
} from '../../activities/media/generate';
import { MAX_PIXELS, sharp, sniffImage } from '../../activities/media/image-input';
import { formFields, readForm } from '../multipart';
import { imageByToken, storeImageLink } from '../../activities/store/images';
import { createHash } from 'node:crypto';
import { AppError, notFound } from '../../schema/errors';
import { ImageEditForm, ImageGenerateBody, ImagesResponse, ImageVariationForm } from '../../schema/images';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';

/** The service's own base URL for links (SVC_PUBLIC_URL, else the listening address). */
function publicBase(ctx: AppContext): string {
  const { publicUrl, host, port } = ctx.deps.config;
  const configured = publicUrl?.replace(/\/+$/, '').replace(/\/v1$/, '');
  if (configured) return configured;
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

const NOT_FORM = 'Send the images as multipart/form-data: the image in field "image", the other fields beside it.';

/**
 * An uploaded image to edit: PNG, JPEG or WebP by its bytes, readable, within the decoder's limits; sent on as it
 * came (re-encoding would lose what an edit depends on, transparency above all).
 * @throws AppError unsupported_media_type or invalid_request naming `where`
 */
async function checkedImage(
  bytes: Buffer,
  where: string,
): Promise<ImageFile & { width: number; height: number; alpha: boolean }> {
  const type = sniffImage(bytes);
  if (type !== 'image/png' && type !== 'image/jpeg' && type !== 'image/webp')
    throw new AppError('unsupported_media_type', `${where}: not a PNG, JPEG or WebP image (checked from its bytes).`, {
      details: [{ path: where, message: 'not a PNG, JPEG or WebP image' }],
    });
  const meta = await sharp()(bytes, { limitInputPixels: MAX_PIXELS })
    .metadata()
    .catch(() => undefined);
  if (!meta?.width || !meta.height)
    throw new AppError('invalid_request', `${where}: the image cannot be read (damaged, or over 60 megapixels).`, {
      details: [{ path: where, message: 'unreadable image' }],
    });
  return { bytes, contentType: type, width: meta.width, height: meta.height, alpha: meta.hasAlpha === true };
}

/** A mask: a PNG with transparency, the size of the (first) image, as OpenAI requires. @throws AppError naming body.mask */
async function checkedMask(bytes: Buffer, image: { width: number; height: number }): Promise<ImageFile> {
  const mask = await checkedImage(bytes, 'body.mask');
  const wrong =
    mask.contentType !== 'image/png' || !mask.alpha
      ? 'a PNG with an alpha channel (transparent where the image is to change)'
      : mask.width !== image.width || mask.height !== image.height
        ? `the size of the image (${image.width}x${image.height}), not ${mask.width}x${mask.height}`
        : undefined;
  if (wrong)
    throw new AppError('invalid_request', `body.mask: must be ${wrong}.`, {
      details: [{ path: 'body.mask', message: wrong }],
    });
  return mask;
}

/** Images as OpenAI answers them: b64_json, or (the default) links to copies stored for the tenant. */
async function imagesAnswer(ctx: AppContext, images: GeneratedImage[], format: 'url' | 'b64_json' | undefined) {
  const created = Math.floor(Date.now() / 1000);
  if (format === 'b64_json') {
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
        return imagesAnswer(ctx, images, body.response_format ?? undefined);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/images/edits',
      access: { scope: 'runtime:chat' },
      tags: ['images'],
      consumes: 'multipart/form-data',
      body: ImageEditForm,
      response: ImagesResponse,
      summary:
        "OpenAI-compatible image edit through the images lane: multipart image (or up to 16 as image[]), optional mask (a PNG with transparency, the first image's size), prompt; answered as generations are.",
      responses: {
        413: 'The files are over SVC_UPLOAD_LIMIT together.',
        415: 'An image that is not PNG, JPEG or WebP (by its bytes); not multipart.',
        502: 'Provider error',
        503: 'No image provider',
        504: 'Provider timeout',
      },
      handler: async (ctx: AppContext) => {
        const form = await readForm(ctx, ctx.deps.config.uploadLimit, { image: 16, 'image[]': 16, mask: 1 }, NOT_FORM);
        const fields = formFields(ImageEditForm, form.fields);
        const given = [...(form.files.image ?? []), ...(form.files['image[]'] ?? [])];
        if (!given.length)
          throw new AppError(
            'invalid_request',
            'Send the image to edit in multipart field "image" (or several as "image[]").',
            {
              details: [{ path: 'body.image', message: 'required' }],
            },
          );
        if (given.length > 16)
          throw new AppError('invalid_request', 'At most 16 images.', {
            details: [{ path: 'body.image', message: 'at most 16' }],
          });
        const images = await Promise.all(
          given.map((f, i) => checkedImage(f.bytes, given.length > 1 ? `body.image.${i}` : 'body.image')),
        );
        const mask = form.files.mask?.[0] ? await checkedMask(form.files.mask[0].bytes, images[0]) : undefined;
        const edited = await editImages(ctx.deps.config, {
          images,
          mask,
          prompt: fields.prompt,
          n: fields.n ?? 1,
          size: fields.size,
          quality: fields.quality,
          background: fields.background,
          outputFormat: fields.output_format,
        });
        return imagesAnswer(ctx, edited, fields.response_format);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/images/variations',
      access: { scope: 'runtime:chat' },
      tags: ['images'],
      consumes: 'multipart/form-data',
      body: ImageVariationForm,
      response: ImagesResponse,
      summary:
        'OpenAI-compatible image variations through the images lane: multipart image (a square PNG, as OpenAI requires), n, size; answered as generations are.',
      responses: {
        413: 'The file is over SVC_UPLOAD_LIMIT.',
        415: 'Not a PNG (by its bytes); not multipart.',
        502: 'Provider error',
        503: 'No image provider',
        504: 'Provider timeout',
      },
      handler: async (ctx: AppContext) => {
        const form = await readForm(ctx, ctx.deps.config.uploadLimit, { image: 1 }, NOT_FORM);
        const fields = formFields(ImageVariationForm, form.fields);
        const file = form.files.image?.[0];
        if (!file)
          throw new AppError('invalid_request', 'Send the image in multipart field "image".', {
            details: [{ path: 'body.image', message: 'required' }],
          });
        const image = await checkedImage(file.bytes, 'body.image');
        if (image.contentType !== 'image/png' || image.width !== image.height)
          throw new AppError('invalid_request', 'body.image: variations take a square PNG, as OpenAI requires.', {
            details: [{ path: 'body.image', message: 'a square PNG' }],
          });
        const varied = await imageVariations(ctx.deps.config, { image, n: fields.n ?? 1, size: fields.size });
        return imagesAnswer(ctx, varied, fields.response_format);
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
