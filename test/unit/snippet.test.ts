import { cutText, snippetOf } from '../../schema/snippet';

describe('snippetOf, the one snippet helper', () => {
  test('collapses whitespace and keeps short text whole', () => {
    expect(snippetOf('  a\n\n b\tc  ')).toBe('a b c');
    expect(snippetOf(null)).toBe('');
  });

  test('cuts at max characters with an ellipsis', () => {
    const s = snippetOf('x'.repeat(500), 200);
    expect(s).toHaveLength(200);
    expect(s.endsWith('…')).toBe(true);
  });

  test('keepLines keeps line breaks (a goal step snippet stays parseable as a plan)', () => {
    expect(snippetOf('1. a\n2. b', 300, { keepLines: true })).toBe('1. a\n2. b');
    expect(snippetOf(`1. a\n${'y'.repeat(400)}`, 300, { keepLines: true })).toMatch(/^1\. a\ny+…$/);
  });

  test('never cuts a surrogate pair in two (PostgreSQL jsonb refuses the lone half)', () => {
    const s = snippetOf('a'.repeat(198) + '🎉'.repeat(5), 200);
    expect(s.isWellFormed()).toBe(true);
    expect(s).toBe(`${'a'.repeat(198)}…`);
    expect(cutText('ab🎉', 3)).toBe('ab');
    expect(cutText('ab🎉', 4)).toBe('ab🎉');
    expect(cutText('abc', 5)).toBe('abc');
  });
});
