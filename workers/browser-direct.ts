import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { hostname } from 'node:os';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import type { Logger } from 'pino';
import type { CommandInput } from '../activities/browser/activities';
import { BROWSER_DIRECT_PATH, type BrowserCommandResult, type BrowserDirectAnswer } from '../workflows/browser-defs';

const MAX_BODY = 1024 * 1024;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error('body too large'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function validInput(v: unknown): v is CommandInput {
  const o = v as Partial<CommandInput> | null;
  return (
    !!o &&
    typeof o.sessionId === 'string' &&
    typeof o.tenantId === 'string' &&
    typeof o.expiresAt === 'number' &&
    !!o.cmd &&
    typeof o.cmd.op === 'string'
  );
}

/**
 * A browser worker's command endpoint: the API sends a session's command here when this worker owns
 * it, instead of a workflow update (two workflow tasks and an activity dispatch less per command).
 * Every request must carry this worker's random token (kept in `browser_workers`, read by the API).
 * `run` serialises per session and checkpoints exactly like the activity; a session this worker does
 * not hold answers `SessionLost` and the API falls back to the workflow, which recovers it.
 */
export async function startDirectServer(o: {
  host: string;
  port: number;
  advertise?: string;
  log: Logger;
  run: (input: CommandInput) => Promise<BrowserCommandResult>;
}): Promise<{ endpoint: string; token: string; close(): Promise<void> }> {
  const token = randomBytes(32).toString('base64url');
  const expected = Buffer.from(`Bearer ${token}`);
  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    const auth = Buffer.from(req.headers.authorization ?? '');
    if (auth.length !== expected.length || !timingSafeEqual(auth, expected))
      return send(401, { error: 'unauthorized' });
    if (req.method !== 'POST' || req.url !== BROWSER_DIRECT_PATH) return send(404, { error: 'not found' });
    void (async () => {
      let input: unknown;
      try {
        input = JSON.parse(await readBody(req));
      } catch {
        return send(400, { error: 'body: not JSON' });
      }
      if (!validInput(input)) return send(400, { error: 'body: sessionId, tenantId, expiresAt and cmd are required' });
      let answer: BrowserDirectAnswer;
      try {
        answer = { ok: true, result: await o.run(input) };
      } catch (err) {
        const f = err instanceof ApplicationFailure ? err : undefined;
        answer = {
          ok: false,
          type: f?.type ?? 'BrowserError',
          message: (err as Error)?.message ?? 'Browser command failed.',
        };
      }
      send(200, answer);
    })().catch((err: Error) => {
      o.log.warn({ err: err.message }, 'browser command endpoint failed');
      if (!res.headersSent) send(500, { error: 'internal error' });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const wildcard = o.host === '0.0.0.0' || o.host === '::';
  const host = o.advertise ?? (wildcard ? hostname() : o.host);
  const endpoint = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    endpoint,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        // Commands in progress finish; idle keep-alive connections go at once.
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
