import { z } from 'zod';
import { zodDetails } from '../../schema/errors';

// zod reports a value no alternative of a union took as "Invalid input" at the union's path.
const Content = z.union([z.string(), z.array(z.object({ type: z.literal('text'), text: z.string() }))]);
const details = (value: unknown) => {
  const r = z.object({ content: Content }).safeParse({ content: value });
  if (r.success) throw new Error('expected a failure');
  return zodDetails(r.error.issues, 'body');
};

test('a value of one alternative’s type gets that alternative’s issues, at their own paths', () => {
  expect(details([{ type: 'text', text: 5 }])).toEqual([
    { path: 'body.content.0.text', message: 'Invalid input: expected string, received number' },
  ]);
});

test('a value of no alternative’s type is told the types the alternatives take', () => {
  expect(details(5)).toEqual([{ path: 'body.content', message: 'Invalid input: expected string or array' }]);
});

test('values two alternatives could have been keep zod’s words', () => {
  const Either = z.union([z.object({ a: z.string() }), z.object({ b: z.string() })]);
  const r = Either.safeParse({ a: 1, b: 2 });
  expect(zodDetails(r.error!.issues, 'body')).toEqual([{ path: 'body', message: 'Invalid input' }]);
});
