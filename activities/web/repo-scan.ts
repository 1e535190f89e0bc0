import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** Folders that are dependencies or build output: listed in the tree, never walked. */
const SKIP_DIRS = new Set([
  '.git',
  'node_modules',
  'vendor',
  'dist',
  'build',
  'target',
  '.venv',
  'venv',
  '__pycache__',
  '.next',
  '.cache',
  '.gradle',
  '.idea',
  'coverage',
]);

const LANGUAGES: Record<string, string> = {
  '.ts': 'TypeScript',
  '.tsx': 'TypeScript',
  '.mts': 'TypeScript',
  '.cts': 'TypeScript',
  '.js': 'JavaScript',
  '.jsx': 'JavaScript',
  '.mjs': 'JavaScript',
  '.cjs': 'JavaScript',
  '.py': 'Python',
  '.go': 'Go',
  '.rs': 'Rust',
  '.java': 'Java',
  '.kt': 'Kotlin',
  '.kts': 'Kotlin',
  '.scala': 'Scala',
  '.c': 'C',
  '.h': 'C',
  '.cc': 'C++',
  '.cpp': 'C++',
  '.cxx': 'C++',
  '.hpp': 'C++',
  '.cs': 'C#',
  '.rb': 'Ruby',
  '.php': 'PHP',
  '.swift': 'Swift',
  '.m': 'Objective-C',
  '.sh': 'Shell',
  '.bash': 'Shell',
  '.zsh': 'Shell',
  '.ps1': 'PowerShell',
  '.sql': 'SQL',
  '.html': 'HTML',
  '.css': 'CSS',
  '.scss': 'SCSS',
  '.vue': 'Vue',
  '.svelte': 'Svelte',
  '.md': 'Markdown',
  '.rst': 'reStructuredText',
  '.json': 'JSON',
  '.yml': 'YAML',
  '.yaml': 'YAML',
  '.toml': 'TOML',
  '.xml': 'XML',
  '.proto': 'Protocol Buffers',
  '.tf': 'HCL',
  '.lua': 'Lua',
  '.dart': 'Dart',
  '.ex': 'Elixir',
  '.exs': 'Elixir',
  '.erl': 'Erlang',
  '.hs': 'Haskell',
  '.clj': 'Clojure',
  '.r': 'R',
  '.jl': 'Julia',
  '.zig': 'Zig',
};
const BY_NAME: Record<string, string> = { Dockerfile: 'Dockerfile', Makefile: 'Makefile', Jenkinsfile: 'Groovy' };

/** Secret patterns: only the type and the location are ever reported. */
const SECRETS: Array<[string, RegExp]> = [
  ['private-key', /-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY( BLOCK)?-----/],
  ['aws-access-key-id', /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/],
  ['github-token', /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b/],
  ['slack-token', /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/],
  ['google-api-key', /\bAIza[0-9A-Za-z_-]{35}\b/],
  ['stripe-secret-key', /\b[sr]k_live_[0-9A-Za-z]{20,}\b/],
  ['openai-api-key', /\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}\b/],
  ['jwt', /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b/],
  [
    'password-assignment',
    /\b(?:password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)\b\s*[:=]\s*["'][^"'\s]{8,}["']/i,
  ],
];

/**
 * The text with every secret-looking value replaced by `[redacted <type>]` (whole PEM private-key
 * blocks included): what leaves the scanner towards a model or a report never carries the value.
 */
export function redactSecrets(text: string): string {
  let out = text.replace(
    /-----BEGIN [A-Z ]*PRIVATE KEY( BLOCK)?-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY( BLOCK)?-----|$)/g,
    '[redacted private-key]',
  );
  for (const [type, re] of SECRETS) out = out.replace(new RegExp(re.source, re.flags + 'g'), `[redacted ${type}]`);
  return out;
}

export interface ScanFile {
  path: string;
  size: number;
  lines: number;
  language?: string;
  text: boolean;
}

export interface ScanResult {
  files: ScanFile[];
  dirs: string[];
  bytes: number;
  secrets: Array<{ type: string; path: string; line: number }>;
  truncated: boolean;
}

const MAX_FILES = 100_000;
const MAX_READ = 1024 * 1024;

/** Own keys only: a file named `constructor` or `toString` must not find Object.prototype's members. */
const lookup = (table: Record<string, string>, key: string) => (Object.hasOwn(table, key) ? table[key] : undefined);

export function languageOf(rel: string): string | undefined {
  const base = path.basename(rel);
  return lookup(BY_NAME, base) ?? lookup(LANGUAGES, path.extname(base).toLowerCase());
}

function scanSecrets(text: string, rel: string, out: ScanResult['secrets']): void {
  if (out.length >= 200) return;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.length > 2000) continue;
    for (const [type, re] of SECRETS) {
      if (re.test(line)) {
        out.push({ type, path: rel, line: i + 1 });
        break;
      }
    }
  }
}

/**
 * Walks a folder without following symbolic links (a link is listed, never read), skipping
 * dependency and build folders; counts lines of text files under 1 MB and scans them for secrets.
 */
export function scanTree(root: string): ScanResult {
  const out: ScanResult = { files: [], dirs: [], bytes: 0, secrets: [], truncated: false };
  const stack = [''];
  while (stack.length) {
    const rel = stack.pop()!;
    let entries;
    try {
      entries = readdirSync(path.join(root, rel), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        out.dirs.push(child);
        if (!SKIP_DIRS.has(e.name)) stack.push(child);
        continue;
      }
      if (!e.isFile()) continue; // symbolic links, sockets, devices
      if (out.files.length >= MAX_FILES) {
        out.truncated = true;
        return out;
      }
      const full = path.join(root, child);
      let size = 0;
      try {
        size = statSync(full).size;
      } catch {
        continue;
      }
      out.bytes += size;
      const file: ScanFile = { path: child, size, lines: 0, language: languageOf(child), text: false };
      if (size <= MAX_READ) {
        const buf = readFileSync(full);
        if (!buf.subarray(0, 8000).includes(0)) {
          file.text = true;
          const text = buf.toString('utf8');
          let n = 0;
          for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
          file.lines = n + (text.length && !text.endsWith('\n') ? 1 : 0);
          scanSecrets(text, child, out.secrets);
        }
      }
      out.files.push(file);
    }
  }
  return out;
}

/** A two-level listing, folders first, capped at `max` lines. */
export function renderTree(scan: ScanResult, max = 200): string {
  const entries = [...scan.dirs.map((d) => `${d}/`), ...scan.files.map((f) => f.path)].filter(
    (p) => p.replace(/\/$/, '').split('/').length <= 2,
  );
  entries.sort((a, b) => a.localeCompare(b));
  const lines = entries.slice(0, max).map((p) => {
    const parts = p.replace(/\/$/, '').split('/');
    return `${'  '.repeat(parts.length - 1)}${parts.at(-1)}${p.endsWith('/') ? '/' : ''}`;
  });
  if (entries.length > max) lines.push(`… ${entries.length - max} more`);
  return lines.join('\n');
}
