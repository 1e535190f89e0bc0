import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { RepoReport } from '../../schema/web';

type Manifest = RepoReport['manifests'][number];
type Dep = Manifest['dependencies'][number];

const MANIFEST = /(^|\/)(package\.json|go\.mod|requirements(-[\w]+)?\.txt|pyproject\.toml|Cargo\.toml|pom\.xml)$/;

function npm(text: string): Omit<Manifest, 'path'> {
  const j = JSON.parse(text) as Record<string, unknown>;
  const deps: Dep[] = [];
  for (const [field, scope] of [
    ['dependencies', 'runtime'],
    ['devDependencies', 'dev'],
    ['peerDependencies', 'peer'],
    ['optionalDependencies', 'optional'],
  ] as const) {
    for (const [name, version] of Object.entries((j[field] ?? {}) as Record<string, unknown>))
      deps.push({ name, version: String(version), scope });
  }
  return { ecosystem: 'npm', name: typeof j.name === 'string' ? j.name : undefined, dependencies: deps };
}

function goMod(text: string): Omit<Manifest, 'path'> {
  const name = /^module\s+(\S+)/m.exec(text)?.[1];
  const deps: Dep[] = [];
  const block = /^require\s*\(([\s\S]*?)^\)/gm;
  const lines: string[] = [];
  for (let m = block.exec(text); m; m = block.exec(text)) lines.push(...m[1].split('\n'));
  for (const m of text.matchAll(/^require\s+(\S+\s+\S+)/gm)) lines.push(m[1]);
  for (const line of lines) {
    const m = /^\s*(\S+)\s+(v\S+)(\s*\/\/\s*indirect)?/.exec(line);
    if (m) deps.push({ name: m[1], version: m[2], scope: m[3] ? 'indirect' : 'runtime' });
  }
  return { ecosystem: 'go', name, dependencies: deps };
}

function requirements(text: string): Omit<Manifest, 'path'> {
  const deps: Dep[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line || line.startsWith('-')) continue;
    const m = /^([A-Za-z0-9_.[\]-]+)\s*(.*)$/.exec(line);
    if (m) deps.push({ name: m[1], ...(m[2] ? { version: m[2].trim() } : {}) });
  }
  return { ecosystem: 'python', dependencies: deps };
}

function pyproject(text: string): Omit<Manifest, 'path'> {
  const t = parseToml(text) as Record<string, any>;
  const deps: Dep[] = [];
  for (const spec of (t.project?.dependencies ?? []) as string[]) {
    const m = /^([A-Za-z0-9_.[\]-]+)\s*(.*)$/.exec(spec.trim());
    if (m) deps.push({ name: m[1], ...(m[2] ? { version: m[2].trim() } : {}) });
  }
  for (const [name, v] of Object.entries((t.tool?.poetry?.dependencies ?? {}) as Record<string, unknown>)) {
    if (name !== 'python') deps.push({ name, version: typeof v === 'string' ? v : undefined });
  }
  return { ecosystem: 'python', name: t.project?.name ?? t.tool?.poetry?.name, dependencies: deps };
}

function cargo(text: string): Omit<Manifest, 'path'> {
  const t = parseToml(text) as Record<string, any>;
  const deps: Dep[] = [];
  for (const [table, scope] of [
    ['dependencies', 'runtime'],
    ['dev-dependencies', 'dev'],
    ['build-dependencies', 'build'],
  ] as const) {
    for (const [name, v] of Object.entries((t[table] ?? {}) as Record<string, unknown>)) {
      const version =
        typeof v === 'string'
          ? v
          : typeof (v as { version?: unknown })?.version === 'string'
            ? (v as { version: string }).version
            : undefined;
      deps.push({ name, version, scope });
    }
  }
  return { ecosystem: 'rust', name: t.package?.name, dependencies: deps };
}

function pom(text: string): Omit<Manifest, 'path'> {
  const tag = (xml: string, name: string) => new RegExp(`<${name}>\\s*([^<]+?)\\s*</${name}>`).exec(xml)?.[1];
  const body = text.replace(/<!--[\s\S]*?-->/g, '');
  const deps: Dep[] = [];
  for (const m of body.matchAll(/<dependency>([\s\S]*?)<\/dependency>/g)) {
    const g = tag(m[1], 'groupId');
    const a = tag(m[1], 'artifactId');
    if (a)
      deps.push({ name: g ? `${g}:${a}` : a, version: tag(m[1], 'version'), scope: tag(m[1], 'scope') ?? 'compile' });
  }
  const head = body.replace(/<dependencies>[\s\S]*<\/dependencies>/, '').replace(/<parent>[\s\S]*?<\/parent>/, '');
  const g = tag(head, 'groupId');
  const a = tag(head, 'artifactId');
  return { ecosystem: 'maven', name: a ? (g ? `${g}:${a}` : a) : undefined, dependencies: deps };
}

/** Dependency manifests (npm, Go, Python, Rust, Maven) among `paths`; unreadable ones are skipped. */
export function readManifests(root: string, paths: string[]): Manifest[] {
  const out: Manifest[] = [];
  for (const rel of paths.filter((p) => MANIFEST.test(p)).slice(0, 50)) {
    let text: string;
    try {
      text = readFileSync(path.join(root, rel), 'utf8');
    } catch {
      continue;
    }
    const base = path.basename(rel);
    try {
      const m =
        base === 'package.json'
          ? npm(text)
          : base === 'go.mod'
            ? goMod(text)
            : base === 'pyproject.toml'
              ? pyproject(text)
              : base === 'Cargo.toml'
                ? cargo(text)
                : base === 'pom.xml'
                  ? pom(text)
                  : requirements(text);
      out.push({ path: rel, ...m, dependencies: m.dependencies.slice(0, 500) });
    } catch {
      // A manifest that does not parse is left out rather than failing the report.
    }
  }
  return out;
}
