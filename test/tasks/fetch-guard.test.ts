import { isPrivateAddress, safeFetch } from '../../activities/tasks/safe-fetch';
import { type Harness } from '../helpers/harness';
import { withReceiver, type Receiver } from './receiver';
import { runTask } from './run-task';

jest.setTimeout(120_000);

let h: Harness;
let rx: Receiver;
let key: string;
// Default configuration: private fetches refused, no model provider configured.
withReceiver({ worker: true }, (harness, receiver, k) => ((h = harness), (rx = receiver), (key = k)));

const run = (body: unknown) => runTask(h, key, body);

test.each([
  ['127.0.0.1', true],
  ['10.1.2.3', true],
  ['172.20.0.1', true],
  ['192.168.1.1', true],
  ['169.254.169.254', true],
  ['100.64.0.1', true],
  ['0.0.0.0', true],
  ['::1', true],
  ['fe80::1', true],
  ['fd00::1', true],
  ['::ffff:127.0.0.1', true],
  ['8.8.8.8', false],
  ['93.184.216.34', false],
  ['2606:4700::1111', false],
])('isPrivateAddress(%s) = %s', (ip, expected) => {
  expect(isPrivateAddress(ip)).toBe(expected);
});

test('safeFetch refuses loopback by literal address and by name unless allowed; caps size', async () => {
  rx.route('/big', { body: 'x'.repeat(5000) });
  await expect(safeFetch(`${rx.url}/big`, { allowPrivate: false })).rejects.toThrow(/private or loopback/);
  await expect(safeFetch(rx.url.replace('127.0.0.1', 'localhost') + '/big', { allowPrivate: false })).rejects.toThrow(
    /resolves to a private address/,
  );
  await expect(safeFetch('file:///etc/passwd', { allowPrivate: true })).rejects.toThrow(/http and https only/);
  expect(rx.on('/big')).toHaveLength(0);
  const capped = await safeFetch(`${rx.url}/big`, { allowPrivate: true, maxBytes: 1000 });
  expect(capped).toMatchObject({ status: 200, truncated: true });
  expect(capped.body.length).toBe(1000);
  rx.route('/slow', { delayMs: 2000 });
  await expect(safeFetch(`${rx.url}/slow`, { allowPrivate: true, timeoutMs: 200 })).rejects.toThrow(/time limit/);
});

test('a fetch step against loopback fails permanently with the refusal; nothing is requested', async () => {
  const done = await run({
    title: 'ssrf',
    steps: [{ id: 'f', title: 'f', action: 'fetch', args: { url: `${rx.url}/secret` } }],
  });
  expect(done.status).toBe('failed');
  expect(done.steps[0]).toMatchObject({ status: 'failed', attempts: 1 });
  expect(done.steps[0].error).toMatch(/Refused to fetch 127\.0\.0\.1:\d+: private or loopback address/);
  expect(rx.on('/secret')).toHaveLength(0);
});

test('without a model provider, model steps fail with a clear non-retryable error', async () => {
  const done = await run({
    title: 'no model',
    steps: [{ id: 'g', title: 'g', action: 'generate', args: { prompt: 'hi' } }],
  });
  expect(done.status).toBe('failed');
  expect(done.steps[0].attempts).toBe(1);
  expect(done.steps[0].error).toMatch(/No model provider is configured/);
});
