import {
  checkImageRequest,
  editImages,
  generateImages,
  type GeneratedImage,
  type ImageFile,
} from '../../activities/media/generate';
import { decodeBase64 } from '../../activities/media/base64';
import { loadImage, MAX_IMAGE_BYTES, MAX_PIXELS, sharp, sniffImage } from '../../activities/media/image-input';
import type { FileReader } from './chat-parts';
import type { Config } from '../../schema/config';
import { AppError, type ErrorCode } from '../../schema/errors';
import type { CreateResponseRequest } from '../../schema/responses';
import { IMAGE_GENERATION, type ImageGenerationTool } from '../../schema/responses-image-gen';
import { parseStorableJson, storableText } from '../../schema/storable';
import { imageFailures, itemId, type ImageGenerationCall, type StoredItem } from './responses-items';

type Emit = (type: string, data: Record<string, unknown>) => void;

/**
 * The image an edit changes: the conversation's latest, as base64 (an image made, an image sent inline) or the URL
 * the client gave (read through the fetch guard when an edit needs it).
 */
export type LatestImage = { base64: string } | { url: string } | { missing: string };

/**
 * What a call the lane made of the image_generation function asks: the `prompt` string of its arguments (or the
 * arguments themselves when the model wrote plain text; empty when it gave none), and whether it asks for an edit.
 */
function callOf(args: string): { prompt: string; edit: boolean } {
  try {
    const v = parseStorableJson(args);
    if (v !== null && typeof v === 'object') {
      const { prompt, edit } = v as { prompt?: unknown; edit?: unknown };
      return { prompt: typeof prompt === 'string' ? prompt.trim() : '', edit: edit === true || edit === 'true' };
    }
    return { prompt: typeof v === 'string' ? v.trim() : '', edit: false };
  } catch {
    // Plain text, as the model wrote it: made storable (a NUL or a lone surrogate would fail the stored response).
    return { prompt: storableText(args).trim(), edit: false };
  }
}

/**
 * The latest image of a conversation: the last image made (a completed image_generation_call) or the last image of a
 * user message, whichever came later; `missing` (why) when the last image made was sent back without its result, or a
 * compaction stands after the images (it keeps no image made): an edit must not change an older image instead.
 * Undefined when it has none.
 */
export function latestImage(items: readonly StoredItem[]): LatestImage | undefined {
  for (let k = items.length - 1; k >= 0; k--) {
    const item = items[k];
    if (item.type === 'image_generation_call' && item.status === 'completed')
      return item.result
        ? { base64: item.result }
        : {
            missing:
              "the conversation's latest image was sent back without its result, so it cannot be edited; send the image_generation_call item whole, or make a new image.",
          };
    if (item.type === 'compaction')
      return {
        missing:
          'the conversation was compacted after its images (a compaction keeps no image made), so there is none to edit; give the image again, or make a new one.',
      };
    if (item.type === 'message' && item.role === 'user') {
      const image = item.content.findLast((p) => p.type === 'input_image');
      if (image?.type === 'input_image') {
        const inline = /^data:[^,;]*;base64,/i.exec(image.image_url);
        return inline ? { base64: image.image_url.slice(inline[0].length) } : { url: image.image_url };
      }
    }
  }
  return undefined;
}

/**
 * A response's image_generation tool (OpenAI's): offered to the lane as a function of a `prompt` (and, under action
 * auto, an `edit` flag); each call the model makes is an image made with the images lane (as POST
 * /v1/images/generations makes one, or /images/edits changing the conversation's latest image) and given to the client
 * as an image_generation_call item with the image's base64. The lane hears that the image was made, never its bytes.
 */
export class ImageGeneration {
  /** The calls (by item id) that asked for an edit of the latest image. */
  private readonly edits = new Set<string>();

  constructor(
    private readonly config: Config,
    readonly tool: ImageGenerationTool,
    /** The image an edit changes (each image made becomes it). */
    public latest: LatestImage | undefined,
  ) {}

  /**
   * The request's image_generation tool, checked against the images lane before anything else runs. Undefined when
   * the request has none.
   * @throws AppError 503 when no images lane is configured, 400 naming `body.tools.N.size` for a size the lane lacks
   */
  static async open(
    config: Config,
    body: CreateResponseRequest,
    /** The conversation's items (history and input): its latest image is what an edit changes. */
    items: readonly StoredItem[],
    /** The tenant's files (a mask given by `file_id`). */
    files: FileReader,
  ): Promise<ImageGeneration | undefined> {
    const at = body.tools?.findIndex((t) => t.type === IMAGE_GENERATION) ?? -1;
    if (at < 0) return undefined;
    let tool = body.tools![at] as ImageGenerationTool;
    try {
      checkImageRequest(config, 1, tool.size ?? undefined);
    } catch (err) {
      if (err instanceof AppError && err.details?.some((d) => d.path === 'body.size'))
        throw new AppError('invalid_request', `tools.${at}.${err.message}`, {
          details: [{ path: `body.tools.${at}.size`, message: err.details[0].message }],
        });
      throw err;
    }
    // The mask is read and checked now, and kept inline (a background response's worker reads it from its job).
    const mask = tool.input_image_mask;
    if (mask != null)
      tool = {
        ...tool,
        input_image_mask: {
          image_url: `data:image/png;base64,${(await checkedMask(mask, at, files)).toString('base64')}`,
        },
      };
    return new ImageGeneration(config, tool, latestImage(items));
  }

  /** Whether calls may edit: `generate` makes new images only, `edit` always edits, `auto` lets the model say. */
  private get mode(): 'generate' | 'edit' | 'auto' {
    return this.tool.action ?? 'auto';
  }

  /** The tool as the lane's function. */
  laneTool() {
    return {
      type: 'function' as const,
      function: {
        name: IMAGE_GENERATION,
        description:
          'Makes an image from a description and shows it to the user. Call it when the user asks for an image (a picture, drawing, photo, illustration, logo). Write the whole description in the prompt: subject, setting, style, composition, colours, any text the image holds. You do not see the image.',
        parameters: {
          type: 'object',
          properties: {
            prompt: {
              type: 'string',
              description:
                this.mode === 'edit'
                  ? 'What to change in the latest image of the conversation (the one last made, or the last one the user gave).'
                  : 'What the image shows, in full; for an edit, what to change.',
            },
            ...(this.mode === 'auto'
              ? {
                  edit: {
                    type: 'boolean',
                    description:
                      'true to change the latest image of the conversation (the one last made, or the last one the user gave) rather than make a new one.',
                  },
                }
              : {}),
          },
          required: ['prompt'],
          additionalProperties: false,
        },
      },
    };
  }

  /** The settings an image is made with, as the item shows them (OpenAI's defaults where the tool does not say). */
  private settings() {
    const t = this.tool;
    return {
      size: t.size ?? 'auto',
      quality: t.quality ?? 'auto',
      background: t.background ?? 'auto',
      output_format: t.output_format ?? 'png',
    };
  }

  /** A call of the lane as its item, not yet made: its prompt read from the arguments (see `withArguments`). */
  itemFor(args: string): ImageGenerationCall {
    return this.withArguments(
      { type: 'image_generation_call', id: itemId('ig'), status: 'in_progress', result: null, ...this.settings() },
      args,
    );
  }

  /**
   * The item with the prompt its call's arguments give (they may still have been streaming when it was added), and
   * whether it edits (kept by its id: the item has no field for it).
   */
  withArguments(item: ImageGenerationCall, args: string): ImageGenerationCall {
    const { revised_prompt: _was, ...rest } = item;
    const { prompt, edit } = callOf(args);
    if (this.mode === 'edit' || (this.mode === 'auto' && edit)) this.edits.add(item.id);
    else this.edits.delete(item.id);
    return prompt ? { ...rest, revised_prompt: prompt } : rest;
  }

  /**
   * Makes the image: the item completed with its base64, the prompt the lane's provider revised it to, in the tool's
   * output format; or failed (the provider's failure is the call's, never thrown: the model is told why).
   */
  async run(item: ImageGenerationCall, signal: AbortSignal): Promise<ImageGenerationCall> {
    const prompt = item.revised_prompt ?? '';
    if (!prompt) return failed(item, 'the call gave no prompt.');
    const edit = this.edits.has(item.id);
    if (edit && !this.latest)
      return failed(item, 'there is no image in the conversation to edit; make one first (without edit).');
    if (edit && 'missing' in this.latest!) return failed(item, this.latest.missing);
    const t = this.tool;
    const settings = {
      prompt,
      n: 1,
      size: t.size ?? undefined,
      quality: t.quality != null && t.quality !== 'auto' ? t.quality : undefined,
      background: t.background != null && t.background !== 'auto' ? t.background : undefined,
    };
    let image: GeneratedImage;
    try {
      if (edit) {
        const { width, height, ...source } = await this.latestImage();
        const mask = this.mask();
        const mismatch = mask && (await maskMismatch({ width, height }, mask));
        if (mismatch) return failed(item, mismatch);
        [image] = await editImages(this.config, { ...settings, images: [source], mask }, signal);
      } else [image] = await generateImages(this.config, settings, signal);
    } catch (err) {
      // An edit source that cannot be read (an AppError, as every read of client bytes here throws) fails the call,
      // not the request: it is read only when the model asks for an edit, so the request itself was valid.
      if (err instanceof AppError) return failed(item, err.message);
      throw err;
    }
    const format = this.settings().output_format;
    const bytes = await this.encoded(image).catch(() => undefined);
    if (!bytes) return failed(item, `the image the provider made could not be written as ${format}.`);
    if (bytes.length > MAX_IMAGE_BYTES)
      return failed(
        item,
        `the image written as ${format} is over ${MAX_IMAGE_BYTES} bytes; ask for jpeg or webp, or a smaller size.`,
      );
    const result = bytes.toString('base64');
    this.latest = { base64: result };
    const revised = image.revisedPrompt !== undefined ? storableText(image.revisedPrompt) : prompt;
    return { ...item, status: 'completed', result, revised_prompt: revised };
  }

  /**
   * The image an edit changes, with its size: inline PNG, JPEG or WebP as it is (a mask must match it pixel for
   * pixel), once its header reads (an `image_generation_call.result` the client sent back is checked by nothing
   * before this: bytes that only start like an image would reach sharp or the provider); else read (a URL through the
   * fetch guard), checked from its bytes and normalised as images for the lanes are (PNG when it has transparency,
   * else JPEG; the longest side at most 2048).
   * @throws AppError when it cannot be read (the call fails with that)
   */
  private async latestImage(): Promise<ImageFile & Size> {
    const src = this.latest as Exclude<LatestImage, { missing: string }>;
    if ('base64' in src) {
      const bytes = decodeBase64(src.base64, MAX_IMAGE_BYTES);
      const type = typeof bytes === 'string' ? null : sniffImage(bytes);
      if (typeof bytes !== 'string' && (type === 'image/png' || type === 'image/jpeg' || type === 'image/webp'))
        return { bytes, contentType: type, ...(await sizeOf(bytes, 'the image to edit')) };
    }
    const img = await loadImage('base64' in src ? { image_base64: src.base64 } : { image_url: src.url }, this.config);
    return { bytes: img.bytes, contentType: img.mediaType, width: img.width, height: img.height };
  }

  /** The tool's mask (checked when the response began), or undefined. */
  private mask(): ImageFile | undefined {
    const url = this.tool.input_image_mask?.image_url;
    return url
      ? { bytes: Buffer.from(url.slice(url.indexOf(',') + 1), 'base64'), contentType: 'image/png' }
      : undefined;
  }

  /** The image in the tool's output format (and compression, for jpeg and webp): as it came when it already is. */
  private async encoded(image: GeneratedImage): Promise<Buffer> {
    const format = this.tool.output_format ?? 'png';
    const compression = this.tool.output_compression ?? 100;
    if (image.contentType === `image/${format}` && (format === 'png' || compression === 100)) return image.bytes;
    const s = sharp()(image.bytes, { limitInputPixels: MAX_PIXELS });
    const quality = Math.max(1, compression);
    if (format === 'png') return s.png().toBuffer();
    if (format === 'jpeg') return s.flatten({ background: '#ffffff' }).jpeg({ quality }).toBuffer();
    return s.webp({ quality }).toBuffer();
  }

  /**
   * The events of a call as it is made (OpenAI's): in progress and generating before, then (partial_images asked for)
   * the image as its one partial image, and completed. A failed call has no event of its own: its item says so.
   */
  emitRunning(emit: Emit, at: { output_index: number; item_id: string }): void {
    emit('response.image_generation_call.in_progress', at);
    emit('response.image_generation_call.generating', at);
  }

  emitMade(emit: Emit, at: { output_index: number; item_id: string }, item: ImageGenerationCall): void {
    if (item.status !== 'completed') return;
    if ((this.tool.partial_images ?? 0) > 0 && item.result)
      emit('response.image_generation_call.partial_image', {
        ...at,
        partial_image_index: 0,
        partial_image_b64: item.result,
        ...this.settings(),
      });
    emit('response.image_generation_call.completed', at);
  }
}

/**
 * A mask given with the tool (`input_image_mask`: inline as a data URL or base64, or an uploaded `file_id`), read and
 * checked: a PNG with an alpha channel, transparent where the image is to change, as OpenAI's edits take it.
 * @throws AppError 400 naming `body.tools.N.input_image_mask` (404 for an unknown file, 413 over MAX_IMAGE_BYTES)
 */
async function checkedMask(
  mask: NonNullable<ImageGenerationTool['input_image_mask']>,
  at: number,
  files: FileReader,
): Promise<Buffer> {
  const path = `body.tools.${at}.input_image_mask`;
  const refuse = (field: string, message: string, code: ErrorCode = 'invalid_request') =>
    new AppError(code, `tools.${at}.input_image_mask.${field}: ${message}.`, {
      details: [{ path: `${path}.${field}`, message }],
    });
  // Over the cap of any image a request gives (as an edit source is): 413, by id as inline.
  const tooLarge = (field: string) => refuse(field, `over ${MAX_IMAGE_BYTES} bytes`, 'payload_too_large');
  let bytes: Buffer;
  if (mask.file_id != null) {
    const file = await files(mask.file_id);
    if (!file)
      throw new AppError(
        'not_found',
        `tools.${at}.input_image_mask.file_id: no file '${mask.file_id}' among your files.`,
        {
          details: [{ path: `${path}.file_id`, message: 'not found' }],
        },
      );
    // Checked before the bytes go any further: the mask is inlined into the tool, which a background response's
    // job and every batch line's plan keep.
    if (file.bytes.length > MAX_IMAGE_BYTES) throw tooLarge('file_id');
    bytes = file.bytes;
  } else {
    const url = mask.image_url!;
    if (/^https?:/i.test(url)) throw refuse('image_url', 'send the mask inline (a data URL or base64) or as a file_id');
    const inline = /^data:[^,;]*;base64,/i.exec(url);
    const decoded = decodeBase64(inline ? url.slice(inline[0].length) : url, MAX_IMAGE_BYTES);
    if (decoded === 'invalid') throw refuse('image_url', 'not base64 (or a data URL of it)');
    if (decoded === 'tooLarge') throw tooLarge('image_url');
    bytes = decoded;
  }
  const field = mask.file_id != null ? 'file_id' : 'image_url';
  const meta =
    sniffImage(bytes) === 'image/png'
      ? await sharp()(bytes, { limitInputPixels: MAX_PIXELS })
          .metadata()
          .catch(() => undefined)
      : undefined;
  if (!meta?.hasAlpha)
    throw refuse(field, 'must be a PNG with an alpha channel (transparent where the image is to change)');
  return bytes;
}

type Size = { width: number; height: number };

/**
 * An image's width and height, read from its header.
 * @throws AppError unsupported_media_type naming `what` when sharp cannot read it (corrupt, or over MAX_PIXELS)
 */
async function sizeOf(bytes: Buffer, what: string): Promise<Size> {
  const meta = await sharp()(bytes, { limitInputPixels: MAX_PIXELS })
    .metadata()
    .catch((err: Error) => {
      throw new AppError('unsupported_media_type', `${what} could not be read: ${err.message.slice(0, 120)}`);
    });
  if (!meta.width || !meta.height) throw new AppError('unsupported_media_type', `${what} could not be read.`);
  return { width: meta.width, height: meta.height };
}

/** Why a mask cannot be used with an image (its size differs), or undefined. @throws AppError as sizeOf */
async function maskMismatch(image: Size, mask: ImageFile): Promise<string | undefined> {
  const m = await sizeOf(mask.bytes, 'the mask');
  return image.width === m.width && image.height === m.height
    ? undefined
    : `the mask is ${m.width}x${m.height} and the image to edit ${image.width}x${image.height}; they must be the same size.`;
}

/** The tool as a Response object echoes it: what it was given, OpenAI's defaults for the rest. */
export const imageToolEcho = (t: ImageGenerationTool) => ({
  type: IMAGE_GENERATION,
  model: t.model ?? 'gpt-image-1',
  quality: t.quality ?? 'auto',
  size: t.size ?? 'auto',
  output_format: t.output_format ?? 'png',
  output_compression: t.output_compression ?? 100,
  moderation: t.moderation ?? 'auto',
  background: t.background ?? 'auto',
  partial_images: t.partial_images ?? 0,
  action: t.action ?? 'auto',
  ...(t.input_fidelity != null ? { input_fidelity: t.input_fidelity } : {}),
});

/** The item failed, with the reason the model is told. */
function failed(item: ImageGenerationCall, why: string): ImageGenerationCall {
  const done: ImageGenerationCall = { ...item, status: 'failed', result: null };
  imageFailures.set(done, why);
  return done;
}

/** A call that was not made (the response ended, or its tool call budget was spent): failed, saying so. */
export const imageNotMade = (item: ImageGenerationCall) =>
  failed(item, 'the response ended, or spent its tool call budget (max_tool_calls), before this call.');
