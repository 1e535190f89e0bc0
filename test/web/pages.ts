import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A real loopback HTTP server whose routes a test sets; counts hits per path. */
export interface PageServer {
  url: string;
  port: number;
  hits: Map<string, number>;
  route(path: string, handler: Handler): void;
  close(): Promise<void>;
}

export async function startPages(): Promise<PageServer> {
  const routes = new Map<string, Handler>();
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const h = routes.get(path);
    if (h) h(req, res);
    else res.writeHead(404).end('not found');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    hits,
    route: (p, h) => void routes.set(p, h),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
