// `npm test`: the whole suite in two Jest runs, then one closing line for both.
//  1. every file except test/faults/, on two Jest workers (the files are independent: each has its own
//     database copy and task queue; most of their time is spent waiting on Temporal, PostgreSQL or Chromium);
//  2. test/faults/ alone, on one worker, because it kills and restarts the shared PostgreSQL and Temporal.
// With arguments (`npm test -- <files or Jest options>`) it is plain Jest with those arguments.
const { spawnSync } = require('node:child_process');
const { mkdtempSync, readFileSync, existsSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');

const jest = path.join(__dirname, '..', 'node_modules', 'jest', 'bin', 'jest.js');
const nodeArgs = ['--experimental-vm-modules', '--no-warnings=ExperimentalWarning', jest];
const args = process.argv.slice(2);

function run(jestArgs, env = {}) {
  const r = spawnSync(process.execPath, [...nodeArgs, ...jestArgs], {
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });
  return r.status ?? 1;
}

if (args.length) process.exit(run(args));

const dir = mkdtempSync(path.join(tmpdir(), 'svc-test-'));
const phases = [
  { name: 'main', args: [`--maxWorkers=${process.env.SVC_TEST_WORKERS ?? 2}`], env: { SVC_TEST_PHASE: 'main' } },
  { name: 'faults', args: ['test/faults/', '--maxWorkers=1', '--selectProjects', 'integration'], env: {} },
];
const started = Date.now();
let status = 0;
const totals = { passed: 0, failed: 0, skipped: 0 };
for (const phase of phases) {
  const file = path.join(dir, `${phase.name}.json`);
  const code = run(phase.args, { ...phase.env, SVC_TEST_SUMMARY_FILE: file });
  if (code !== 0) status = code;
  if (!existsSync(file)) {
    totals.failed += 1; // the run ended before its reporter wrote anything: count it as a failure
    continue;
  }
  const r = JSON.parse(readFileSync(file, 'utf8'));
  for (const k of Object.keys(totals)) totals[k] += r[k];
}
rmSync(dir, { recursive: true, force: true });
const line = `Tests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`;
process.stdout.write(
  `\nWhole suite (${phases.map((p) => p.name).join(' + ')}): ${Math.round((Date.now() - started) / 1000)} s\n`,
);
process.stderr.write(`\n${line}\n`);
process.stdout.write(`\n${line}\n`);
process.exit(status || (totals.failed ? 1 : 0));
