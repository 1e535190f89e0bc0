import { z } from 'zod';
import { lazyModule } from '../lazy-module';
import { runBounded } from './bounded';
import { defineTool } from './types';

/** Functions that could alter the instance, parse code, or allocate huge structures. */
const DISABLED = [
  'import',
  'createUnit',
  'evaluate',
  'parse',
  'compile',
  'simplify',
  'derivative',
  'resolve',
  'parser',
  'chain',
  'help',
  'range',
  'zeros',
  'ones',
  'identity',
  'resize',
  'reshape',
  'random',
  'randomInt',
  'pickRandom',
  'sparse',
];

/**
 * A mathjs instance with the dangerous functions disabled, built once on the calculator's first use
 * (mathjs is 31 MB of heap: loaded then, not at start; see lazyModule).
 */
const calculatorMath = lazyModule(() => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- see lazyModule
  const { create, all } = require('mathjs') as typeof import('mathjs');
  const math = create(all);
  const evaluate = math.evaluate;
  const off: Record<string, () => never> = {};
  for (const name of DISABLED)
    off[name] = () => {
      throw new Error(`${name} is disabled in the calculator`);
    };
  math.import(off, { override: true });
  return { math, evaluate };
});

export const calculator = defineTool({
  name: 'calculator',
  description:
    'Evaluates a math expression (arithmetic, functions, units like "5 cm to inch", small matrices). No variables persist.',
  input: z.object({ expression: z.string().min(1).max(300) }),
  run({ expression }) {
    const { math, evaluate } = calculatorMath();
    const value = runBounded(() => math.format(evaluate(expression, {}), { precision: 14 }));
    return { expression, result: value };
  },
});
