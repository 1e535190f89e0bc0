import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { roundRobinFront } from '../../workers/cluster';

/** A backend that answers with its name and echoes the body it received. */
async function backend(name: string): Promise<{ port: number; server: http.Server; hits: number }> {
  const b = { port: 0, server: http.createServer(), hits: 0 };
  b.server.on('request', (req, res) => {
    b.hits++;
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name, body, path: req.url })),
    );
  });
  await new Promise<void>((r) => b.server.listen(0, '127.0.0.1', r));
  b.port = (b.server.address() as AddressInfo).port;
  return b;
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const close = (s: http.Server) =>
  new Promise<void>((r) => {
    s.closeAllConnections();
    s.close(() => r());
  });

test('requests alternate between API processes and keep their path and body', async () => {
  const a = await backend('a');
  const b = await backend('b');
  const front = roundRobinFront([a.port, b.port]);
  const url = await listen(front);
  const names: string[] = [];
  for (let i = 0; i < 4; i++) {
    const r = await fetch(`${url}/v1/tasks?x=${i}`, { method: 'POST', body: `body-${i}` });
    const j = (await r.json()) as { name: string };
    expect(j).toMatchObject({ body: `body-${i}`, path: `/v1/tasks?x=${i}` });
    names.push(j.name);
  }
  expect(names).toEqual(['a', 'b', 'a', 'b']);
  await close(front);
  await close(a.server);
  await close(b.server);
});

test('a dead API process is skipped: no request that had not reached it is lost', async () => {
  const a = await backend('a');
  const b = await backend('b');
  const front = roundRobinFront([a.port, b.port]);
  const url = await listen(front);
  // Warm kept-alive sockets to both, then kill one backend.
  await fetch(`${url}/`);
  await fetch(`${url}/`);
  await close(a.server);
  const answers = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      fetch(`${url}/p${i}`, { method: 'POST', body: `n${i}` }).then(async (r) => ({
        status: r.status,
        j: (await r.json()) as { name: string; body: string },
      })),
    ),
  );
  expect(answers.map((x) => x.status)).toEqual([200, 200, 200, 200, 200, 200]);
  expect(answers.every((x) => x.j.name === 'b')).toBe(true);
  expect(answers.map((x) => x.j.body)).toEqual(['n0', 'n1', 'n2', 'n3', 'n4', 'n5']);
  // Every backend gone: a clear 502 in our error shape, not a hang.
  await close(b.server);
  const down = await fetch(`${url}/x`);
  expect(down.status).toBe(502);
  expect(await down.json()).toMatchObject({ code: 'bad_gateway' });
  await close(front);
});
