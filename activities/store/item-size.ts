/**
 * The characters of an image_generation_call's image, which no lane is ever sent (the lane reads that the image was
 * made): they do not count toward SVC_CHAT_BODY_LIMIT, the budget of what a request may send a lane. Without this, a
 * conversation that made ten images would be refused for its size. What a request reads back stays bounded all the
 * same: the stores read no image but the latest (`responseChain`, `conversationContext`), the only one an edit can use.
 */
function imageChars(item: unknown): number {
  if (item === null || typeof item !== 'object' || (item as { type?: unknown }).type !== 'image_generation_call')
    return 0;
  const result = (item as { result?: unknown }).result;
  return typeof result === 'string' ? result.length : 0;
}

/** What a stored item counts toward SVC_CHAT_BODY_LIMIT: its JSON (`json`), less a made image. */
export const itemChars = (item: unknown, json: string): number => json.length - imageChars(item);

/** What a list of stored items counts toward SVC_CHAT_BODY_LIMIT (see `itemChars`). */
export const itemsChars = (items: readonly unknown[]): number =>
  JSON.stringify(items).length - items.reduce<number>((n, i) => n + imageChars(i), 0);
