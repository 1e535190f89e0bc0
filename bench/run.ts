/**
 * `npm run bench -- <name>`: runs bench/<name>.ts from the build (gateway, dag, tick, reasoning, knowledge, browser).
 */
const NAMES = ['gateway', 'dag', 'tick', 'reasoning', 'knowledge', 'browser'];
const name = process.argv[2];
if (!name || !NAMES.includes(name)) {
  console.error(`usage: npm run bench -- <${NAMES.join('|')}>`);
  process.exitCode = 2;
} else {
  require(`./${name}`);
}
