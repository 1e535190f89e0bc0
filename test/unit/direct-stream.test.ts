import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DirectStream } from '../../api/fast-path';

// The fast path's SSE body: the first write (head, role, first token) leaves at once, even when it is made
// from a microtask (Node would otherwise keep the socket corked until its nextTick, after every pending
// microtask); later writes keep Node's corking, so events written together still leave in one write.
describe('DirectStream', () => {
  it('flushes the first write at once and keeps corking for the later ones', async () => {
    const seen: Array<{ corked: number; buffered: number }> = [];
    const server = http.createServer((_req, res) => {
      res.setHeader('Content-Type', 'text/event-stream');
      const stream = new DirectStream(res);
      const socket = res.socket!;
      void Promise.resolve().then(() => {
        stream.write('data: first\n\n');
        seen.push({ corked: socket.writableCorked, buffered: socket.writableLength });
        stream.write('data: second\n\n');
        stream.write('data: third\n\n');
        seen.push({ corked: socket.writableCorked, buffered: socket.writableLength });
        stream.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      expect(await res.text()).toBe('data: first\n\ndata: second\n\ndata: third\n\n');
    } finally {
      server.close();
    }
    // First write: uncorked, nothing left in the socket's buffer (handed to the kernel) before the next microtask.
    expect(seen[0]).toEqual({ corked: 0, buffered: 0 });
    // The next two: corked together until Node's nextTick, still buffered.
    expect(seen[1].corked).toBe(1);
    expect(seen[1].buffered).toBeGreaterThan('data: second\n\ndata: third\n\n'.length);
  });
});
