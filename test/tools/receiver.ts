import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local web server that plan steps fetch (web_fetch through the real fetch guard, private
 * addresses allowed in tests): counts requests received and answers delivered per path; a path
 * can be held until the test releases it, or until `together` requests wait on it at once.
 */
export interface Receiver {
  url: string;
  received(path: string): number;
  delivered(path: string): number;
  hold(path: string): void;
  release(path: string): void;
  /** Answer requests to these paths only once all of them are in flight together (proves parallelism). */
  together(paths: string[]): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received = new Map<string, number>();
  const delivered = new Map<string, number>();
  const held = new Set<string>();
  const waiting = new Map<string, Array<() => void>>();
  let group: string[] = [];
  const inc = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  const answer = (path: string, res: http.ServerResponse) => {
    const words = path.replace(/[^a-z]/g, ' ').trim();
    res.once('finish', () => inc(delivered, path));
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<html><head><title>Page ${path}</title></head><body><article><h1>Page ${path}</h1><p>${words} ${'word '.repeat(path.length)}</p></article></body></html>`,
    );
  };
  const flush = () => {
    const groupReady = group.every((g) => (waiting.get(g)?.length ?? 0) > 0);
    for (const [path, list] of [...waiting]) {
      if (!held.has(path) && (groupReady || !group.includes(path))) {
        waiting.delete(path);
        list.forEach((f) => f());
      }
    }
  };
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    inc(received, path);
    const list = waiting.get(path) ?? [];
    list.push(() => (res.destroyed ? undefined : answer(path, res)));
    waiting.set(path, list);
    flush();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: (p) => received.get(p) ?? 0,
    delivered: (p) => delivered.get(p) ?? 0,
    hold: (p) => void held.add(p),
    release: (p) => {
      held.delete(p);
      flush();
    },
    together: (paths) => {
      group = paths;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
