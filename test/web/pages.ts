import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A real loopback HTTP server whose routes a test sets; counts hits per path. */
export interface PageServer {
  url: string;
  port: number;
  hits: Map<string, number>;
  route(path: string, handler: Handler): void;
  /** A path that always answers 200 with this body and Content-Type. */
  serve(path: string, contentType: string, body: string | Buffer): void;
  close(): Promise<void>;
}

/** `host`: the loopback address to listen on (127.0.0.2 serves a first hop an allow list lets through). */
export async function startPages(host = '127.0.0.1'): Promise<PageServer> {
  const routes = new Map<string, Handler>();
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const h = routes.get(path);
    if (h) h(req, res);
    else res.writeHead(404).end('not found');
  });
  await new Promise<void>((r) => server.listen(0, host, () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}`,
    port,
    hits,
    route: (p, h) => void routes.set(p, h),
    serve: (p, type, body) => void routes.set(p, (_q, res) => res.writeHead(200, { 'content-type': type }).end(body)),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
