import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startHarness, type Harness } from '../helpers/harness';

/** One request a local receiver got. */
export interface Received {
  path: string;
  method: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  /** When the request's body had arrived, in epoch ms with sub-millisecond resolution (`nowMs`). */
  startedAt: number;
  /** When its answer was closed (`nowMs`); absent while it is in flight. */
  endedAt?: number;
  /** True when the client went away before the answer was sent (an aborted fetch). */
  closedEarly: boolean;
}

/**
 * A real local HTTP server standing in for the outside world: webhook receivers and web pages.
 * `route(path, { status, delayMs, gate, hang, body, contentType })` sets how a path answers.
 */
/** How the receiver answers one path: status, delay, a gate to wait for, hang, body, failures first. */
export interface RouteHow {
  status?: number;
  delayMs?: number;
  gate?: Promise<unknown>;
  hang?: boolean;
  body?: string;
  contentType?: string;
  failFirst?: number;
}

export interface Receiver {
  url: string;
  got: Received[];
  on(path: string): Received[];
  route(path: string, how: RouteHow): void;
  readonly inFlight: number;
  readonly maxInFlight: number;
  waitFor(pred: () => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Checks `x-svc-signature` the way a receiver would: HMAC-SHA256 over "<timestamp>.<body>". */
export function verifySignature(r: Received, secret: string): boolean {
  const ts = String(r.headers['x-svc-timestamp'] ?? '');
  const sig = String(r.headers['x-svc-signature'] ?? '');
  const expected = `sha256=${createHmac('sha256', secret).update(`${ts}.${r.body}`).digest('hex')}`;
  return sig.length === expected.length && timingSafeEqual(Buffer.from(sig), Buffer.from(expected));
}

/**
 * Epoch milliseconds with sub-millisecond resolution. `Date.now()` gives two events less than a
 * millisecond apart the same stamp, so a check that one came strictly before the other (two gated
 * requests that overlap) failed now and then when the gate opened within the millisecond they arrived.
 */
const nowMs = () => performance.timeOrigin + performance.now();

export async function startReceiver(): Promise<Receiver> {
  const got: Received[] = [];
  const routes = new Map<string, RouteHow>();
  let inFlight = 0;
  let maxInFlight = 0;
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const path = (req.url ?? '/').split('?')[0];
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = body ? JSON.parse(body) : undefined;
      } catch {
        json = undefined;
      }
      const rec: Received = {
        path,
        method: req.method ?? 'GET',
        headers: req.headers,
        body,
        json,
        startedAt: nowMs(),
        closedEarly: false,
      };
      got.push(rec);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      let done = false;
      res.on('close', () => {
        if (!done) rec.closedEarly = true;
        inFlight--;
        rec.endedAt = nowMs();
      });
      const how = routes.get(path) ?? {};
      if (how.delayMs) await new Promise((r) => setTimeout(r, how.delayMs));
      if (how.gate) await how.gate; // answers when the test says so, instead of after a guessed delay
      if (how.hang) return;
      const seen = got.filter((g) => g.path === path).length;
      const status = how.failFirst && seen <= how.failFirst ? 503 : (how.status ?? 200);
      done = true;
      res.writeHead(status, { 'content-type': how.contentType ?? 'text/plain' }).end(how.body ?? 'ok');
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    got,
    on: (path) => got.filter((g) => g.path === path),
    route: (path, how) => void routes.set(path, how),
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    async waitFor(pred, timeoutMs = 20_000) {
      const end = Date.now() + timeoutMs;
      while (!pred()) {
        if (Date.now() > end) throw new Error('receiver: condition not reached in time');
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/**
 * Test-file setup for webhook steps: a harness (`worker`, and `env`; without a worker the file starts its
 * own), a receiver, and a `runtime:records` key, handed to `ready`; afterAll closes both.
 */
export function withReceiver(
  opts: { worker?: boolean; env?: Record<string, string> },
  ready: (h: Harness, rx: Receiver, key: string) => void,
): void {
  let h: Harness | undefined;
  let rx: Receiver | undefined;
  beforeAll(async () => {
    h = await startHarness(opts);
    rx = await startReceiver();
    ready(h, rx, (await h.key(['runtime:records'])).apiKey);
  });
  afterAll(async () => {
    await rx?.close();
    await h?.close();
  });
}
