import fc from 'fast-check';
import { chunkText } from '../../activities/knowledge/chunker';
import { fuseRankings } from '../../activities/knowledge/fusion';
import { decodeText, detectMediaType, looksLikeHtml, looksLikeMarkdown } from '../../activities/knowledge/sniff';
import { checkUrl, guardedLookup, isPrivateAddress } from '../../activities/knowledge/ssrf';
import { renderShareContent } from '../../activities/knowledge/share-page';
import { renderHeadline } from '../../activities/store/chunks';

describe('chunker', () => {
  test('short text is one chunk; paragraphs pack up to the target', () => {
    expect(chunkText('Hello world.')).toEqual(['Hello world.']);
    expect(chunkText('  \n\n ')).toEqual([]);
    const paras = Array.from({ length: 10 }, (_, i) => `Paragraph ${i} `.repeat(20).trim());
    const chunks = chunkText(paras.join('\n\n'), { target: 700, max: 1000 });
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.every((c) => c.length <= 1000)).toBe(true);
  });

  test('property: no chunk exceeds max and every word survives, in order', () => {
    const word = fc.stringMatching(/^[a-z]{1,30}$/);
    const para = fc.array(word, { minLength: 1, maxLength: 300 }).map((ws) => ws.join(' ') + '.');
    fc.assert(
      fc.property(
        fc.array(para, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 100, max: 800 }),
        (paras, target) => {
          const max = target + 200;
          const text = paras.join('\n\n');
          const chunks = chunkText(text, { target, max });
          expect(chunks.every((c) => c.length <= max && c.length > 0)).toBe(true);
          const words = (s: string) => s.split(/\s+/).filter(Boolean);
          expect(words(chunks.join(' '))).toEqual(words(text));
        },
      ),
      { numRuns: 150 },
    );
  });

  test('an unbroken run of characters is hard-split', () => {
    const chunks = chunkText('x'.repeat(5000), { target: 900, max: 1400 });
    expect(chunks.join('')).toBe('x'.repeat(5000));
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThanOrEqual(1400);
  });
});

test('reciprocal rank fusion rewards agreement and is deterministic', () => {
  const fused = fuseRankings([
    [{ id: 'a' }, { id: 'b' }, { id: 'c' }],
    [{ id: 'c' }, { id: 'b' }, { id: 'd' }],
  ]);
  // c (ranks 3 and 1) edges out b (2 and 2); both beat the single-list a and d.
  expect(fused.map((f) => f.id)).toEqual(['c', 'b', 'a', 'd']);
  expect(fused[0].score).toBeCloseTo(1 / 63 + 1 / 61, 10);
  expect(fuseRankings([])).toEqual([]);
});

test('headline rendering escapes text and only adds <mark>', () => {
  expect(renderHeadline('a <b> & \u0001c\u0002 "d"')).toEqual({
    snippet: 'a <b> & c "d"',
    highlight: 'a &lt;b&gt; &amp; <mark>c</mark> &quot;d&quot;',
  });
});

describe('SSRF guard', () => {
  test.each([
    ['127.0.0.1', true],
    ['10.0.0.5', true],
    ['172.20.1.1', true],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['::1', true],
    ['::', true],
    ['fe80::1', true],
    ['fd00::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:10.0.0.1', true],
    ['64:ff9b::a00:1', true],
    ['not-an-ip', true],
    ['8.8.8.8', false],
    ['93.184.216.34', false],
    ['172.32.0.1', false],
    ['2606:4700::1111', false],
    ['::ffff:8.8.8.8', false],
  ])('%s private=%p', (ip, expected) => {
    expect(isPrivateAddress(ip)).toBe(expected);
  });

  test('checkUrl refuses schemes, credentials, private literals and local names unless allowed', () => {
    expect(() => checkUrl('file:///etc/passwd', false)).toThrow(/http and https/);
    expect(() => checkUrl('http://user:pw@example.com/', false)).toThrow(/credentials/);
    expect(() => checkUrl('http://[::1]:8080/', false)).toThrow(/non-public/);
    expect(() => checkUrl('http://localhost/', false)).toThrow(/non-public/);
    expect(() => checkUrl('http://2130706433/', false)).toThrow(/non-public/); // 127.0.0.1 as a number
    expect(checkUrl('http://127.0.0.1:9/', true).port).toBe('9');
    expect(checkUrl('https://example.com/a', false).hostname).toBe('example.com');
  });

  test('the lookup refuses names that resolve to private addresses', async () => {
    const err = await new Promise<NodeJS.ErrnoException | null>((r) =>
      guardedLookup(false)('localhost', {}, (e) => r(e)),
    );
    expect(err?.code).toBe('ESSRF');
    const ok = await new Promise<unknown>((r) => guardedLookup(true)('localhost', { all: true }, (_e, a) => r(a)));
    expect(Array.isArray(ok) && ok.length > 0).toBe(true);
  });
});

describe('type sniffing', () => {
  test('text decoding refuses binary and accepts UTF-8 and UTF-16 with BOM', () => {
    expect(decodeText(Buffer.from([0x68, 0x00, 0x69]))).toBeNull();
    expect(decodeText(Buffer.from([0xc3, 0x28]))).toBeNull();
    expect(decodeText(Buffer.from('héllo'))).toBe('héllo');
    expect(decodeText(Buffer.from('\ufeffhi', 'utf16le'))).toBe('hi');
  });
  test('HTML and markdown sniffing', () => {
    expect(looksLikeHtml('<!DOCTYPE html><p>x')).toBe(true);
    expect(looksLikeHtml('<div><p>a</p><p>b</p></div>')).toBe(true);
    expect(looksLikeHtml('a < b and c > d')).toBe(false);
    expect(looksLikeMarkdown('# Title\n\ntext')).toBe(true);
    expect(looksLikeMarkdown('- one\n- two\n\n**bold**')).toBe(true);
    expect(looksLikeMarkdown('Just a sentence - with a dash.')).toBe(false);
  });
  test('XML and other binaries are unsupported; empty is invalid', async () => {
    await expect(detectMediaType(Buffer.from('<?xml version="1.0"?><note><to>x</to></note>'))).rejects.toMatchObject({
      status: 415,
    });
    await expect(detectMediaType(Buffer.from('PK\u0003\u0004' + 'x'.repeat(100)))).rejects.toMatchObject({
      status: 415,
    });
    await expect(detectMediaType(Buffer.alloc(0))).rejects.toMatchObject({ status: 400 });
    await expect(
      detectMediaType(Buffer.from('<?xml version="1.0"?><!DOCTYPE html><html><body><p>x</p></body></html>')),
    ).resolves.toBe('text/html');
  });
});

test('share sanitising keeps document markup and removes every script vector', () => {
  const out = renderShareContent(
    '<p onclick="x()">hi <a href="javascript:alert(1)">a</a> <a href="https://ok.example/">b</a><img src="javascript:x" onerror="y"><iframe src="https://evil"></iframe><style>p{}</style><form><input></form></p>',
    'html',
  );
  expect(out).toContain('<a href="https://ok.example/" rel="noopener noreferrer nofollow">b</a><img />');
  expect(out).not.toMatch(/onclick|onerror|javascript|iframe|<style|<form|<input|evil/);
  expect(renderShareContent('**bold** <script>alert(1)</script>', 'markdown')).toBe('<p><strong>bold</strong> </p>\n');
});
