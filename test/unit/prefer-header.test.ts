import { prefersMinimal } from '../../schema/headers';

test('Prefer: return=minimal is read as RFC 7240 writes it, and nothing else is', () => {
  for (const yes of [
    'return=minimal',
    'RETURN=Minimal',
    ' return = "minimal" ',
    'respond-async, return=minimal',
    'return=minimal; foo=bar',
    'wait=5,return=minimal',
  ])
    expect([yes, prefersMinimal(yes)]).toEqual([yes, true]);
  for (const no of [
    undefined,
    '',
    'return=representation',
    'return=representation, return=minimal', // the first one given counts
    'returns=minimal',
    'return',
    'return=minimalist',
    'respond-async',
    'x-return=minimal',
  ])
    expect([no, prefersMinimal(no)]).toEqual([no, false]);
});
