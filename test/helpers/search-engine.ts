import { mkdtempSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startPages, type PageServer } from '../web/pages';

/**
 * A real local SearXNG-format search engine (`GET /search?q=`) and an SVC_CONFIG file naming it as the service's one
 * engine. `answer` gets each query and answers it (`res.writeHead(...).end(...)`).
 */
export async function startSearchEngine(
  answer: (query: string, res: ServerResponse) => void,
): Promise<{ engine: PageServer; configFile: string }> {
  const engine = await startPages();
  engine.route('/search', (q, res) => answer(new URL(q.url ?? '', 'http://x').searchParams.get('q') ?? '', res));
  const configFile = path.join(mkdtempSync(path.join(tmpdir(), 'svc-search-')), 'svc.yaml');
  writeFileSync(configFile, `search:\n  engines:\n    - { name: local, type: searxng, base_url: "${engine.url}" }\n`);
  return { engine, configFile };
}

/** The engine's JSON answer with these results. */
export const answerResults = (res: ServerResponse, results: unknown[]) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results }));
