import { createHash } from 'node:crypto';

/**
 * The name the lane knows a remote MCP server's tool by: `label__tool` when that is a valid function name (64 of
 * a-z, A-Z, 0-9, `_`, `-`), else its valid characters cut short with a hash of the pair, so one pair has one name in
 * every request (a call in the history reads as the same function) and two pairs never share one.
 */
export function mcpLaneName(label: string, tool: string): string {
  const plain = `${label}__${tool}`;
  if (/^[A-Za-z0-9_-]{1,64}$/.test(plain)) return plain;
  const hash = createHash('sha256').update(`${label}\0${tool}`).digest('hex').slice(0, 8);
  return `${plain.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 55)}_${hash}`;
}
