import { resolveGuarded } from '../../activities/browser/guard-proxy';
import { lineDiff, subtree, truncate } from '../../activities/browser/snapshot';
import { stateCipher } from '../../activities/browser/state-crypto';

test('state cipher: AES-GCM round trip, random IV, tamper and wrong key detected, clear without a key', () => {
  const c = stateCipher('0123456789abcdef-key');
  const a = c.seal('{"cookies":[{"name":"session","value":"secret"}]}');
  expect(a).toMatch(/^gcm1:/);
  expect(a).not.toContain('secret');
  expect(c.seal('x')).not.toBe(c.seal('x'));
  expect(c.open(a)).toContain('"secret"');
  const raw = Buffer.from(a.slice(5), 'base64');
  raw[raw.length - 1] ^= 1;
  expect(() => c.open(`gcm1:${raw.toString('base64')}`)).toThrow();
  expect(() => stateCipher('another-key-0123456').open(a)).toThrow();
  expect(() => stateCipher(undefined).open(a)).toThrow(/SVC_STATE_KEY/);
  const clear = stateCipher(undefined);
  expect(clear.encrypted).toBe(false);
  expect(clear.seal('plain')).toBe('plain');
});

test('guard: private, metadata, local names and non-http schemes refused; allow list is exact to host:port', async () => {
  const closed = { allowPrivate: false, allowHosts: ['127.0.0.1:8080'] };
  for (const url of [
    'http://10.0.0.1/',
    'http://169.254.169.254/latest',
    'http://[::1]:80/',
    'http://localhost/',
    'http://db.internal/',
    'file:///etc/passwd',
    'data:text/html,x',
    'http://u:p@example.com/',
    'http://127.0.0.1:8081/',
  ]) {
    await expect(resolveGuarded(url, closed)).rejects.toThrow();
  }
  await expect(resolveGuarded('http://127.0.0.1:8080/x', closed)).resolves.toMatchObject({
    address: '127.0.0.1',
    port: 8080,
  });
  await expect(resolveGuarded('http://10.0.0.1/', { allowPrivate: true, allowHosts: [] })).resolves.toMatchObject({
    address: '10.0.0.1',
  });
});

test('snapshot helpers: subtree by ref, truncation at a line, line diff', () => {
  const text = '- main [ref=e1]:\n  - list [ref=e2]:\n    - item [ref=e3]\n  - button "Go" [ref=e4]';
  expect(subtree(text, 'e2')).toBe('- list [ref=e2]:\n  - item [ref=e3]');
  expect(subtree(text, 'e9')).toBeUndefined();
  expect(truncate(text, 30)).toEqual({ text: '- main [ref=e1]:', truncated: true });
  expect(truncate(text, 1000).truncated).toBe(false);
  expect(lineDiff('a\nb\n', 'a\nc\n')).toBe('- b\n+ c');
});
