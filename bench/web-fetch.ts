/**
 * web-fetch quality and speed on the article-extraction pages (../shared/data/article-extraction,
 * see its README): each page is served decompressed as text/html from a loopback server and
 * fetched through POST /v1/capabilities/web-fetch (format text, cache off); its text is scored
 * against the human-checked article body with the benchmark's own metric (4-token shingles,
 * per-page normalised tp/fp/fn, precision and recall averaged over pages, F1 of the means).
 * Baseline in the same run: Mozilla Readability.js on linkedom (textContent) on the same pages.
 *
 * PASS when F1 ≥ 0.97 and ≥ the baseline's, and the in-process fetch+extract p50 (the route's
 * download + extraction without HTTP to our API) is under 50 ms.
 *
 * Run: npm run -s bench -- web-fetch   (BENCH_PG_URL as for the other benches; WEB_BENCH_PAGES
 * limits the page count).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { guardedRequest } from '../activities/net/guarded-http';
import { extractBody } from '../activities/web/fetch-page';
import { fmt, percentile, startBenchApp } from './helpers';

const ROOT = path.resolve(process.cwd(), '../shared/data/article-extraction');

function shingles(text: string): Map<string, number> {
  const w = text.match(/\w+/g) ?? [];
  const m = new Map<string, number>();
  for (let i = 0; i + 4 <= w.length; i++) {
    const k = w.slice(i, i + 4).join(' ');
    m.set(k, (m.get(k) ?? 0) + 1);
  }
  return m;
}

/** Per-page tp/fp/fn over shingle multisets, normalised to sum to 1. */
export function pageScore(pred: string, truth: string): { tp: number; fp: number; fn: number } {
  const a = shingles(pred);
  const b = shingles(truth);
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const [k, c] of a) {
    const d = b.get(k) ?? 0;
    tp += Math.min(c, d);
    fp += Math.max(0, c - d);
  }
  for (const [k, c] of b) fn += Math.max(0, c - (a.get(k) ?? 0));
  const s = tp + fp + fn;
  return s ? { tp: tp / s, fp: fp / s, fn: fn / s } : { tp: 0, fp: 0, fn: 0 };
}

export function aggregate(scores: Array<{ tp: number; fp: number; fn: number }>): {
  precision: number;
  recall: number;
  f1: number;
} {
  const p = scores.filter((s) => s.tp + s.fp > 0).map((s) => s.tp / (s.tp + s.fp));
  const r = scores.filter((s) => s.tp + s.fn > 0).map((s) => s.tp / (s.tp + s.fn));
  const precision = p.reduce((x, y) => x + y, 0) / (p.length || 1);
  const recall = r.reduce((x, y) => x + y, 0) / (r.length || 1);
  return { precision, recall, f1: precision + recall ? (2 * precision * recall) / (precision + recall) : 0 };
}

async function main(): Promise<void> {
  const truth = JSON.parse(readFileSync(path.join(ROOT, 'ground-truth.json'), 'utf8')) as Record<
    string,
    { url: string; articleBody: string }
  >;
  const ids = Object.keys(truth).slice(0, Number(process.env.WEB_BENCH_PAGES ?? 1e9));
  const pages = new Map(ids.map((id) => [id, zlib.gunzipSync(readFileSync(path.join(ROOT, 'html', `${id}.html.gz`)))]));
  const server = http.createServer((req, res) => {
    const body = pages.get((req.url ?? '').slice(1));
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const app = await startBenchApp({ SVC_ALLOW_PRIVATE_FETCH: 'true' });
  const key = await app.key(['runtime:chat']);
  try {
    const ours: Array<{ tp: number; fp: number; fn: number }> = [];
    const theirs: typeof ours = [];
    const routeMs: number[] = [];
    const extractMs: number[] = [];
    const baselineMs: number[] = [];
    for (const id of ids) {
      const t0 = performance.now();
      const call = () =>
        fetch(`${app.url}/v1/capabilities/web-fetch`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url: `${base}/${id}`, format: 'text', cache: false }),
        });
      // A keep-alive socket the server closed while idle resets the next request: retry once on a new one.
      const res = await call().catch(call);
      const page = (await res.json()) as { text?: string };
      routeMs.push(performance.now() - t0);
      ours.push(pageScore(res.ok ? (page.text ?? '') : '', truth[id].articleBody));

      // In process: the route's download and extraction, without our API's HTTP and cache write.
      const t1 = performance.now();
      const got = await guardedRequest(`${base}/${id}`, { allowPrivate: true });
      await extractBody(got, {});
      extractMs.push(performance.now() - t1);

      const t2 = performance.now();
      const html = pages.get(id)!.toString('utf8');
      let text = '';
      try {
        const { document } = parseHTML(html);
        text =
          new Readability(document as unknown as ConstructorParameters<typeof Readability>[0]).parse()?.textContent ??
          '';
      } catch {
        text = '';
      }
      baselineMs.push(performance.now() - t2);
      theirs.push(pageScore(text, truth[id].articleBody));
    }
    const a = aggregate(ours);
    const b = aggregate(theirs);
    const p50 = percentile(extractMs, 50);
    console.log(`web-fetch on ${ids.length} article-extraction pages`);
    console.log(
      `  ours (route)            P ${a.precision.toFixed(4)}  R ${a.recall.toFixed(4)}  F1 ${a.f1.toFixed(4)}`,
    );
    console.log(
      `  Readability.js/linkedom P ${b.precision.toFixed(4)}  R ${b.recall.toFixed(4)}  F1 ${b.f1.toFixed(4)}`,
    );
    console.log(`  F1 ratio ours/baseline  ${(a.f1 / b.f1).toFixed(4)}`);
    console.log(`  fetch+extract in process p50 ${fmt(p50)} ms  p95 ${fmt(percentile(extractMs, 95))} ms`);
    console.log(
      `  baseline parse+Readability p50 ${fmt(percentile(baselineMs, 50))} ms  (ratio ${(p50 / percentile(baselineMs, 50)).toFixed(2)})`,
    );
    console.log(`  route round trip p50 ${fmt(percentile(routeMs, 50))} ms  p95 ${fmt(percentile(routeMs, 95))} ms`);
    const pass = a.f1 >= 0.97 && a.f1 >= b.f1 && p50 < 50;
    console.log(pass ? 'PASS' : `FAIL (goal: F1 ≥ 0.97 and ≥ baseline, p50 < 50 ms)`);
    if (!pass) process.exitCode = 1;
  } finally {
    await app.close();
    server.closeAllConnections();
    server.close();
  }
}

void main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
