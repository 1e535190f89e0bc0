/**
 * `npm run bench -- <name>`: runs bench/<name>.ts from the build. Every file in bench/ that is not a helper
 * is a benchmark (gateway, dag, tick, reasoning, knowledge, load, mcp, ws, cutoffs, web-fetch, ...).
 */
import { readdirSync } from 'node:fs';

const NOT_BENCHES = new Set(['run', 'helpers']);
const NAMES = readdirSync(__dirname)
  .filter((f) => f.endsWith('.js'))
  .map((f) => f.slice(0, -3))
  .filter(
    (n) =>
      !NOT_BENCHES.has(n) &&
      !n.includes('-inputs') &&
      !n.includes('-raw-') &&
      !n.endsWith('-workflow') &&
      !n.endsWith('-helpers'),
  )
  .sort();
const name = process.argv[2];
if (!name || !NAMES.includes(name)) {
  console.error(`usage: npm run bench -- <${NAMES.join('|')}>`);
  process.exitCode = 2;
} else {
  require(`./${name}`);
}
