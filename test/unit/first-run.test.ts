import { PassThrough } from 'node:stream';
import { createLogger, chooseLogFormat } from '../../workers/logger';
import { FIRST_KEY_COMMAND, isLoopbackHost, readyBanner, temporalUiTenantLink } from '../../workers/ready-banner';
import { buildProgressLine, formatDuration } from '../../workers/temporal-dev';
import { parseConfig } from '../../schema/config';

/** A stream that says it is (or is not) a terminal, collecting what the logger writes. */
function sink(isTTY: boolean): { stream: PassThrough & { isTTY?: boolean }; text(): string } {
  const stream = new PassThrough() as PassThrough & { isTTY?: boolean };
  stream.isTTY = isTTY;
  let text = '';
  stream.on('data', (c: Buffer) => (text += c.toString()));
  return { stream, text: () => text };
}

describe('log format', () => {
  test('pretty for a terminal, JSON otherwise; the setting overrides both ways', () => {
    expect(chooseLogFormat(undefined, true)).toBe('pretty');
    expect(chooseLogFormat(undefined, false)).toBe('json');
    expect(chooseLogFormat('json', true)).toBe('json');
    expect(chooseLogFormat('pretty', false)).toBe('pretty');
    expect(parseConfig({ SVC_LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(parseConfig({}).logFormat).toBeUndefined();
    expect(() => parseConfig({ SVC_LOG_FORMAT: 'xml' })).toThrow(/SVC_LOG_FORMAT/);
  });

  test('a terminal gets one readable line per event, a pipe gets JSON; keys are redacted in both', () => {
    const tty = sink(true);
    createLogger({ logLevel: 'info' }, 'svc', tty.stream).info(
      { req: { authorization: 'Bearer svc.a.b' } },
      'hello there',
    );
    const line = tty.text();
    expect(line).toContain('hello there');
    expect(line.trim().split('\n')).toHaveLength(1);
    expect(() => JSON.parse(line)).toThrow();
    expect(line).not.toContain('svc.a.b');

    const pipe = sink(false);
    createLogger({ logLevel: 'info' }, 'svc', pipe.stream).info(
      { req: { authorization: 'Bearer svc.a.b' } },
      'hello there',
    );
    const json = JSON.parse(pipe.text());
    expect(json).toMatchObject({ msg: 'hello there', name: 'svc', req: { authorization: '[redacted]' } });

    const forced = sink(false);
    createLogger({ logLevel: 'info', logFormat: 'pretty' }, 'svc', forced.stream).info('forced');
    expect(() => JSON.parse(forced.text())).toThrow();
  });
});

describe('ready banner', () => {
  test('lists the API, OpenAPI, Temporal UI filtered by tenant, the database and how to get a first key', () => {
    const text = readyBanner({
      apiUrl: 'http://127.0.0.1:8080/v1',
      temporalAddress: '127.0.0.1:7233',
      temporalUiUrl: 'http://127.0.0.1:8233',
      namespace: 'default',
      database: 'postgres://postgres@127.0.0.1:5432/svc',
      startupMs: 2345,
    });
    expect(text).toContain('http://127.0.0.1:8080/v1/openapi.json');
    expect(text).toContain('http://127.0.0.1:8233/namespaces/default/workflows?query=SvcTenant%3D%22');
    expect(text).toContain('postgres://postgres@127.0.0.1:5432/svc');
    expect(text).toContain(FIRST_KEY_COMMAND);
    expect(text).toContain('2.3 s');
  });

  test('with a dev key the banner shows the key and a link to that tenant instead of the mint command', () => {
    const text = readyBanner({
      apiUrl: 'http://127.0.0.1:8080/v1',
      temporalAddress: '127.0.0.1:7233',
      temporalUiUrl: 'http://127.0.0.1:8233',
      namespace: 'default',
      database: 'postgresql',
      startupMs: 1000,
      devKey: { apiKey: 'svc.p.s', tenantId: 'ten_x' },
    });
    expect(text).toContain('svc.p.s');
    expect(text).not.toContain(FIRST_KEY_COMMAND);
    expect(text).toContain(temporalUiTenantLink('http://127.0.0.1:8233', 'default', 'ten_x'));
    expect(decodeURIComponent(temporalUiTenantLink('http://u', 'default', 'ten_x'))).toBe(
      'http://u/namespaces/default/workflows?query=SvcTenant="ten_x"',
    );
  });

  test('only loopback hosts count as loopback', () => {
    for (const h of ['127.0.0.1', 'localhost', '::1', '[::1]', '127.3.2.1']) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', 'example.com', '127.0.0.1.example.com', '192.168.1.2'])
      expect(isLoopbackHost(h)).toBe(false);
  });
});

describe('Temporal CLI build progress', () => {
  test('one line with packages built of the estimate, elapsed and what is left', () => {
    expect(formatDuration(65_000)).toBe('1m05s');
    expect(formatDuration(9_400)).toBe('9s');
    expect(buildProgressLine({ built: 0, downloaded: 12, elapsedMs: 4000 })).toBe(
      'Temporal CLI build: 0/~1300 packages, 4s elapsed (12 modules downloaded)',
    );
    expect(buildProgressLine({ built: 650, downloaded: 0, elapsedMs: 60_000 })).toBe(
      'Temporal CLI build: 650/~1300 packages, 1m00s elapsed, ~1m00s left',
    );
    // More packages than the estimate: the total grows instead of going negative.
    expect(buildProgressLine({ built: 1400, downloaded: 0, elapsedMs: 60_000 })).toBe(
      'Temporal CLI build: 1400/~1400 packages, 1m00s elapsed, ~0s left',
    );
  });
});
