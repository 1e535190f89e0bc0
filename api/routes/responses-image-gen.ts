import { checkImageRequest, generateImages, type GeneratedImage } from '../../activities/media/generate';
import { MAX_PIXELS, sharp } from '../../activities/media/image-input';
import type { Config } from '../../schema/config';
import { AppError } from '../../schema/errors';
import type { CreateResponseRequest } from '../../schema/responses';
import { IMAGE_GENERATION, type ImageGenerationTool } from '../../schema/responses-image-gen';
import { parseStorableJson } from '../../schema/storable';
import { imageFailures, itemId, type ImageGenerationCall } from './responses-items';

type Emit = (type: string, data: Record<string, unknown>) => void;

/**
 * The prompt of a call the lane made of the image_generation function: the `prompt` string of its arguments, or the
 * arguments themselves when the model wrote plain text. Empty when it gave none.
 */
function promptOf(args: string): string {
  try {
    const v = parseStorableJson(args);
    if (v !== null && typeof v === 'object') {
      const prompt = (v as { prompt?: unknown }).prompt;
      return typeof prompt === 'string' ? prompt.trim() : '';
    }
    return typeof v === 'string' ? v.trim() : '';
  } catch {
    return args.trim();
  }
}

/**
 * A response's image_generation tool (OpenAI's): offered to the lane as a function of one `prompt`; each call the
 * model makes is an image made with the images lane (as POST /v1/images/generations makes one) and given to the client
 * as an image_generation_call item with the image's base64. The lane hears that the image was made, never its bytes.
 */
export class ImageGeneration {
  constructor(
    private readonly config: Config,
    readonly tool: ImageGenerationTool,
  ) {}

  /**
   * The request's image_generation tool, checked against the images lane before anything else runs. Undefined when
   * the request has none.
   * @throws AppError 503 when no images lane is configured, 400 naming `body.tools.N.size` for a size the lane lacks
   */
  static open(config: Config, body: CreateResponseRequest): ImageGeneration | undefined {
    const at = body.tools?.findIndex((t) => t.type === IMAGE_GENERATION) ?? -1;
    if (at < 0) return undefined;
    const tool = body.tools![at] as ImageGenerationTool;
    try {
      checkImageRequest(config, 1, tool.size ?? undefined);
    } catch (err) {
      if (err instanceof AppError && err.details?.some((d) => d.path === 'body.size'))
        throw new AppError('invalid_request', `tools.${at}.${err.message}`, {
          details: [{ path: `body.tools.${at}.size`, message: err.details[0].message }],
        });
      throw err;
    }
    return new ImageGeneration(config, tool);
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
          properties: { prompt: { type: 'string', description: 'What the image shows, in full.' } },
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

  /** The item with the prompt its call's arguments give (they may still have been streaming when it was added). */
  withArguments(item: ImageGenerationCall, args: string): ImageGenerationCall {
    const { revised_prompt: _was, ...rest } = item;
    const prompt = promptOf(args);
    return prompt ? { ...rest, revised_prompt: prompt } : rest;
  }

  /**
   * Makes the image: the item completed with its base64, the prompt the lane's provider revised it to, in the tool's
   * output format; or failed (the provider's failure is the call's, never thrown: the model is told why).
   */
  async run(item: ImageGenerationCall): Promise<ImageGenerationCall> {
    const prompt = item.revised_prompt ?? '';
    if (!prompt) return failed(item, 'the call gave no prompt.');
    const t = this.tool;
    let image: GeneratedImage;
    try {
      [image] = await generateImages(this.config, {
        prompt,
        n: 1,
        size: t.size ?? undefined,
        quality: t.quality != null && t.quality !== 'auto' ? t.quality : undefined,
        background: t.background != null && t.background !== 'auto' ? t.background : undefined,
      });
    } catch (err) {
      if (err instanceof AppError) return failed(item, err.message);
      throw err;
    }
    const bytes = await this.encoded(image).catch(() => undefined);
    if (!bytes)
      return failed(item, `the image the provider made could not be written as ${this.settings().output_format}.`);
    return {
      ...item,
      status: 'completed',
      result: bytes.toString('base64'),
      revised_prompt: image.revisedPrompt ?? prompt,
    };
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
