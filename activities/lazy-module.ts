/**
 * A heavy library loaded on its first use instead of at process start. Every API and worker process
 * imports the whole activity graph; libraries that only some requests need (the calculator's mathjs,
 * HTML parsing, image resizing, DOCX reading, SMTP, the MCP server) otherwise cost every process their
 * heap for its whole life (mathjs alone: 31 MB and ~0.45 s of start) and make each full garbage
 * collection mark them again. `load` is a `require` of the library, run once.
 */
export function lazyModule<T>(load: () => T): () => T {
  let loaded: { value: T } | undefined;
  return () => (loaded ??= { value: load() }).value;
}
