import type { CliIo } from '../../workers/cli';

/** Runs an operator CLI (`runKeysCli`, `runSpacesCli`) with captured streams; `out` is the parsed JSON result. */
export async function captureCli(
  cli: (argv: string[], io: CliIo) => Promise<number>,
  args: string[],
  env: CliIo['env'],
): Promise<{ code: number; out: any; err: string }> {
  let out = '';
  let err = '';
  const code = await cli(args, { env, out: (s) => (out += s), err: (s) => (err += s) });
  return { code, out: out ? JSON.parse(out) : undefined, err };
}
