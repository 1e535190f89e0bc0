import { parseStorableJson } from '../../schema/storable';

/**
 * The first JSON object in a model answer (models wrap JSON in prose or code fences), its strings made storable;
 * undefined when none parses.
 */
export function jsonIn(text: string): unknown {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    return parseStorableJson(text.slice(start, end + 1));
  } catch {
    return undefined;
  }
}
