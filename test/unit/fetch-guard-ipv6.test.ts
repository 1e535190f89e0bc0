import { checkUrl, isPrivateAddress } from '../../activities/net/ssrf';

// Issue 10 item 9: IPv6 forms that embed an IPv4 address reach that IPv4 host on some stacks.
const policy = { allowPrivate: false, makeError: () => new Error('refused') };

test.each([
  ['::127.0.0.1', true], // IPv4-compatible (::/96), as typed
  ['::7f00:1', true], // the same, as URL parsing normalises it
  ['::a9fe:a9fe', true], // ::169.254.169.254, the metadata service
  ['::8.8.8.8', true], // ::/96 is deprecated and never a public destination
  ['::ffff:0:7f00:1', true], // SIIT-translated ::ffff:0:0:0/96
  ['::ffff:7f00:1', true], // IPv4-mapped, hex form
  ['64:ff9b::7f00:1', true], // NAT64 well-known prefix
  ['64:ff9b::808:808', true],
  ['64:ff9b:1::a00:1', true], // local-use NAT64
  ['::ffff:8.8.8.8', false], // mapped public address stays public
  ['2606:4700::1111', false],
  ['2a00:1450:4001::200e', false],
])('isPrivateAddress(%s) = %s', (ip, expected) => {
  expect(isPrivateAddress(ip)).toBe(expected);
});

test.each([
  'http://[::127.0.0.1]/',
  'http://[::7f00:1]:8080/x',
  'https://[::ffff:0:127.0.0.1]/',
  'http://[64:ff9b::127.0.0.1]/',
  'http://[::169.254.169.254]/latest',
])('checkUrl refuses %s before any connection', (url) => {
  expect(() => checkUrl(url, policy)).toThrow('refused');
});

test('a public IPv6 literal passes', () => {
  expect(checkUrl('http://[2606:4700::1111]/', policy).hostname).toBe('[2606:4700::1111]');
});
