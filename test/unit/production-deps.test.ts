import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';

// Issue 10 item 14: a `npm ci --omit=dev` image must start, and no dependency is dead weight.
// Production code (what `tsconfig.build.json` compiles for `npm start`) may import at load time only
// `dependencies` and Node built-ins; a dev dependency only through a guarded dynamic import.

const ROOT = path.resolve(__dirname, '../..');
const PROD_DIRS = ['api', 'activities', 'workflows', 'workers', 'schema', 'reasoning'];
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
/** Dependencies whose users are outside this scan, with the reason. */
const USED_ELSEWHERE: Record<string, string> = {
  ws: 'WebSocket /v1/ws (merged from the live-events work)',
  'playwright-core': 'browser automation routes (merged from the browser work); tests drive Chromium with it today',
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const packageOf = (spec: string) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
const isBuiltin = (spec: string) => spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0]);

const sources = PROD_DIRS.flatMap((d) => files(path.join(ROOT, d))).map((f) => ({
  file: path.relative(ROOT, f),
  text: readFileSync(f, 'utf8'),
}));
/** Load-time imports (type-only imports are erased by the compiler). */
const STATIC =
  /^\s*(?:import(?!\s+type\b)[^'"]*?from\s*|import\s*|export\s+(?!type\b)[^'"]*?from\s*)['"]([^'".][^'"]*)['"]/gm;
const DYNAMIC = /(?:import|require)\(\s*['"]([^'".][^'"]*)['"]\s*\)/g;

test('production code imports only dependencies and Node built-ins at load time', () => {
  const bad: string[] = [];
  for (const { file, text } of sources) {
    for (const m of text.matchAll(STATIC)) {
      const spec = m[1];
      if (isBuiltin(spec)) continue;
      if (!pkg.dependencies[packageOf(spec)]) bad.push(`${file}: ${spec}`);
    }
  }
  expect(bad).toEqual([]);
});

test('a dev dependency reached by production code is a dynamic import whose absence is handled', () => {
  const devOnly = sources
    .flatMap(({ file, text }) => [...text.matchAll(DYNAMIC)].map((m) => ({ file, spec: m[1] })))
    .filter((d) => pkg.devDependencies[packageOf(d.spec)]);
  expect(devOnly.map((d) => `${d.file}: ${d.spec}`)).toEqual(['workers/temporal-dev.ts: @temporalio/testing']);
  // The one such import explains a missing module instead of failing the start.
  expect(readFileSync(path.join(ROOT, 'workers/temporal-dev.ts'), 'utf8')).toMatch(/MODULE_NOT_FOUND[\s\S]*--omit=dev/);
});

test('every dependency is used by production code', () => {
  const used = new Set<string>();
  for (const { text } of sources)
    for (const m of [...text.matchAll(STATIC), ...text.matchAll(DYNAMIC)]) used.add(packageOf(m[1]));
  const unused = Object.keys(pkg.dependencies).filter((d) => !used.has(d) && !USED_ELSEWHERE[d]);
  expect(unused).toEqual([]);
});
