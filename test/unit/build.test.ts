import { execFile } from 'node:child_process';
import path from 'node:path';

// `npm start` and `npm run bench` build first (`tsc -p tsconfig.build.json`, without Jest's types):
// a type error there stops both, although `npm run typecheck` (with Jest's types) passes.
const ROOT = path.resolve(__dirname, '../..');

test('the production build type-checks on its own config', async () => {
  const result = await new Promise<{ code: number; out: string }>((resolve) =>
    execFile(
      process.execPath,
      [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--noEmit'],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr }),
    ),
  );
  expect(result).toEqual({ code: 0, out: '' });
}, 300_000);
