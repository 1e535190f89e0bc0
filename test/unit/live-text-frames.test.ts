import fc from 'fast-check';
import ws from 'ws';
import { textFrames } from '../../api/live/socket';

/** ws's frame parser (exported by the package, not by its type definitions). */
const { Receiver } = ws as unknown as {
  Receiver: new (o: { isServer: boolean }) => NodeJS.WritableStream & {
    on(event: 'message', fn: (data: Buffer, isBinary: boolean) => void): void;
    on(event: 'error', fn: (err: Error) => void): void;
  };
};

/** Every message ws's own client-side parser reads from `bytes`, and any protocol error it raises. */
function parse(bytes: Buffer): { messages: string[]; error?: string } {
  const messages: string[] = [];
  let error: string | undefined;
  const r = new Receiver({ isServer: false });
  r.on('message', (data: Buffer, isBinary: boolean) => messages.push(`${isBinary ? 'binary:' : ''}${data.toString()}`));
  r.on('error', (err: Error) => (error = err.message));
  r.write(bytes);
  return { messages, error };
}

test('text frames built once per broadcast are what a WebSocket client parses, at every length encoding', () => {
  // 125 / 126 / 65535 / 65536 bytes: the edges of the 7-bit, 16-bit and 64-bit length forms.
  const payloads = [
    '{"type":"done","session":"s"}',
    'a'.repeat(125),
    'b'.repeat(126),
    'c'.repeat(65_535),
    'd'.repeat(65_536),
  ];
  for (const p of payloads) expect(parse(textFrames([Buffer.from(p)]))).toEqual({ messages: [p] });
  expect(parse(textFrames(payloads.map((p) => Buffer.from(p))))).toEqual({ messages: payloads });
});

test('any sequence of UTF-8 payloads round-trips through one write', () => {
  fc.assert(
    fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 300 }), { minLength: 1, maxLength: 6 }), (texts) => {
      expect(parse(textFrames(texts.map((t) => Buffer.from(t))))).toEqual({ messages: texts });
    }),
  );
});
