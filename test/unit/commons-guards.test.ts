import { runCommonsTool } from '../../activities/commons';
import { runBounded, ToolTimeoutError } from '../../activities/commons/bounded';

// The commons tools have several guards in a row (deny list, time limit, input limits, match
// cap). Each is tested here on its own, with input the other guards let through, so that
// losing one guard fails a test even though another might have refused the same input.

const calc = (expression: string) => {
  const r = runCommonsTool('calculator', JSON.stringify({ expression }));
  return { ok: r.ok, value: JSON.parse(r.content) };
};

describe('calculator deny list, entry by entry', () => {
  // Each call is tiny and fast (no time limit reached) and would succeed in a plain mathjs:
  // only the deny list's own error can answer it.
  test.each([
    ['import', 'import({x: 1})'],
    ['createUnit', 'createUnit("furlong2", "220 yards")'],
    ['evaluate', 'evaluate("1+1")'],
    ['parse', 'parse("1+1")'],
    ['compile', 'compile("1+1")'],
    ['simplify', 'simplify("x+x")'],
    ['derivative', 'derivative("x^2", "x")'],
    ['resolve', 'resolve("x+1", {x: 2})'],
    ['parser', 'parser()'],
    ['help', 'help("sqrt")'],
    ['range', 'range(1, 4)'],
    ['range', '1:3'],
    ['zeros', 'zeros(2)'],
    ['ones', 'ones(2)'],
    ['identity', 'identity(2)'],
    ['resize', 'resize([1], [2])'],
    ['reshape', 'reshape([1, 2], [2, 1])'],
    ['random', 'random()'],
    ['randomInt', 'randomInt(1, 5)'],
    ['pickRandom', 'pickRandom([1, 2])'],
    ['sparse', 'sparse([[1]])'],
  ])('%s is refused by the deny list (%s)', (name, expression) => {
    expect(calc(expression)).toEqual({ ok: false, value: { error: `${name} is disabled in the calculator` } });
  });

  test('chain is refused by mathjs itself (its expression parser has no chain), whatever our list says', () => {
    expect(calc('chain(3)')).toEqual({
      ok: false,
      value: { error: expect.stringMatching(/Undefined function chain/) },
    });
  });

  test('functions not on the list still work (the list is not a blanket refusal)', () => {
    expect(calc('matrix([1, 2]) * 2').value.result).toBe('[2, 4]');
    expect(calc('det([[1, 2], [3, 4]])').value.result).toBe('-2');
    expect(calc('round(pi, 3)').value.result).toBe('3.142');
  });
});

describe('the time limit on its own', () => {
  test('stops an endless loop that no other guard sees', () => {
    // Finite (seconds of work), so a missing limit shows up as a returned value, not a hung test.
    const spin = () => {
      let n = 0;
      for (let i = 0; i < 3e8; i++) n = (n + i) % 7;
      return n;
    };
    expect(() => runBounded(spin, 50)).toThrow(ToolTimeoutError);
    expect(() => runBounded(spin, 50)).toThrow(/longer than 50 ms/);
    expect(runBounded(() => 6 * 7, 50)).toBe(42);
  });

  test('stops a calculator expression built only from allowed functions', () => {
    // Recursion with no denied function: only the time limit can stop it.
    const slow = calc('f(n) = n < 1 ? 0 : f(n-1) + f(n-1); f(60)');
    expect(slow).toEqual({ ok: false, value: { error: 'the tool ran longer than 250 ms and was stopped' } });
  });
});

describe('input and output limits on their own', () => {
  test('the calculator refuses an expression over 300 characters before evaluating it', () => {
    const long = `${'1+'.repeat(150)}1`; // 301 characters of plain, fast arithmetic
    const r = calc(long);
    expect(r.ok).toBe(false);
    expect(r.value.error).toMatch(/^expression: .*300/);
    expect(calc(long.slice(2)).value.result).toBe('150');
  });

  test('regex match returns at most 200 matches (fast input, far from the time limit)', () => {
    const r = runCommonsTool('regex', JSON.stringify({ op: 'match', pattern: 'a', text: 'a'.repeat(1000) }));
    expect(r.ok).toBe(true);
    expect(JSON.parse(r.content).count).toBe(200);
  });

  test('a result over 8,000 characters is truncated, not refused', () => {
    const r = runCommonsTool('text', JSON.stringify({ op: 'upper', text: 'a'.repeat(12_000) }));
    expect(r.ok).toBe(true);
    expect(r.content.length).toBeLessThan(8100);
    expect(r.content.endsWith('…(truncated)')).toBe(true);
  });
});
