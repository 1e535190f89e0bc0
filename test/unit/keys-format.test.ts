import fc from 'fast-check';
import { normalizeAppName } from '../../schema/auth';
import { hashSecret, parseKeyToken } from '../../activities/store/keys';

describe('key formats', () => {
  test('parses runtime, bootstrap and legacy keys', () => {
    const secret = 'a'.repeat(32);
    expect(parseKeyToken(`svc.abcdefghjkmn.${secret}`)).toEqual({ kind: 'runtime', prefix: 'abcdefghjkmn', secret });
    expect(parseKeyToken(`agb.abcdefghjkmn.${secret}`)).toEqual({ kind: 'bootstrap', prefix: 'abcdefghjkmn', secret });
    expect(parseKeyToken('legacy.0123456789abcdef')).toEqual({ kind: 'legacy' });
  });

  test.each(['', 'svc', 'svc.short.x', 'sk-abc', 'svc.abcdefghjkmn.' + 'A'.repeat(32), 'legacy.', 'agb..x'])(
    'rejects %p',
    (t) => {
      expect(parseKeyToken(t)).toBeNull();
    },
  );

  test('hash is sha-256 hex and never the secret', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (s) => {
        const h = hashSecret(s);
        expect(h).toMatch(/^[0-9a-f]{64}$/);
        expect(h).not.toContain(s.length > 3 ? s : 'zzzz-not-there');
        expect(hashSecret(s)).toBe(h);
      }),
    );
  });

  test('app names normalise', () => {
    expect(normalizeAppName('  My App! ')).toBe('my-app');
    expect(normalizeAppName('HOME')).toBe('home');
    expect(normalizeAppName('---')).toBe('');
  });
});
