import dns from 'node:dns/promises';
import http from 'node:http';
import net, { isIP, type AddressInfo } from 'node:net';
import { checkUrl, isPrivateAddress, privateAllowed, type PrivateFetchPolicy, type UrlRefusal } from '../net/ssrf';

// Every request a session's page makes (navigations, sub-resources, redirects, WebSockets) leaves
// Chromium through this per-session forward proxy, which applies the one fetch guard and connects
// to the very address it checked (no DNS rebinding between check and connect). Playwright's route
// API cannot do this: it does not see redirects.

export interface GuardPolicy {
  allowPrivate: PrivateFetchPolicy;
  /** `host` or `host:port` entries allowed even when private addresses are refused. */
  allowHosts: string[];
}

export interface Refused {
  url: string;
  reason: string;
}

class Refusal extends Error {}

function describe(r: UrlRefusal): string {
  if (r.reason === 'invalid') return 'not a valid URL';
  if (r.reason === 'scheme') return 'only http and https are allowed';
  if (r.reason === 'credentials') return 'URLs with credentials are refused';
  return `${r.url.hostname} is a private, loopback or otherwise non-public address`;
}

function allowListed(policy: GuardPolicy, host: string, port: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return policy.allowHosts.includes(h) || policy.allowHosts.includes(`${h}:${port}`);
}

/**
 * Checks a URL and resolves its host to one address the connection must use.
 * @throws Refusal naming why
 */
export async function resolveGuarded(
  raw: string,
  policy: GuardPolicy,
): Promise<{ url: URL; address: string; port: number }> {
  const url = checkUrl(raw, { allowPrivate: true, makeError: (r) => new Refusal(describe(r)) });
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  // The same allow rule as every other fetch (SVC_ALLOW_PRIVATE_FETCH), plus the browser's host list.
  const open = privateAllowed(policy.allowPrivate, host) || allowListed(policy, host, String(port));
  if (isIP(host)) {
    if (!open && isPrivateAddress(host) && !privateAllowed(policy.allowPrivate, host, host))
      throw new Refusal(`${host} is a private, loopback or otherwise non-public address`);
    return { url, address: host, port };
  }
  if (!open && /^(localhost|.*\.localhost|.*\.local|.*\.internal)$/i.test(host))
    throw new Refusal(`${host} is a local name`);
  const list = await dns.lookup(host, { all: true }).catch(() => []);
  if (!list.length) throw new Refusal(`${host} does not resolve`);
  const bad = open
    ? undefined
    : list.find((a) => isPrivateAddress(a.address) && !privateAllowed(policy.allowPrivate, host, a.address));
  if (bad) throw new Refusal(`${host} resolves to ${bad.address}, a private or otherwise non-public address`);
  return { url, address: list[0].address, port };
}

const HOP = new Set([
  'proxy-connection',
  'proxy-authorization',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
]);

export interface GuardProxy {
  /** `http://127.0.0.1:<port>` for Playwright's `proxy.server`. */
  server: string;
  /** Requests refused since the last `takeRefused()`. */
  takeRefused(): Refused[];
  close(): Promise<void>;
}

export async function startGuardProxy(policy: GuardPolicy): Promise<GuardProxy> {
  let refused: Refused[] = [];
  const note = (url: string, reason: string) => {
    if (refused.length < 100) refused.push({ url: url.slice(0, 500), reason });
  };
  const server = http.createServer(async (req, res) => {
    try {
      const { url, address, port } = await resolveGuarded(req.url ?? '', policy);
      if (url.protocol !== 'http:') throw new Refusal('only plain http is proxied without CONNECT');
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !HOP.has(k)));
      const upstream = http.request(
        { host: address, port, path: url.pathname + url.search, method: req.method, headers, setHost: false },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.rawHeaders);
          up.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    } catch (err) {
      const reason = err instanceof Refusal ? err.message : 'bad proxy request';
      note(req.url ?? '', reason);
      res
        .writeHead(403, { 'content-type': 'text/plain', 'x-svc-refused': '1' })
        .end(`Refused by the fetch guard: ${reason}`);
    }
  });
  server.on('connect', async (req, socket) => {
    socket.on('error', () => socket.destroy());
    try {
      const { address, port } = await resolveGuarded(`https://${req.url}/`, policy);
      const up = net.connect({ host: address, port }, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        up.pipe(socket);
        socket.pipe(up);
      });
      up.on('error', () => socket.destroy());
      socket.on('close', () => up.destroy());
    } catch (err) {
      note(`https://${req.url}/`, err instanceof Refusal ? err.message : 'bad CONNECT');
      socket.end('HTTP/1.1 403 Forbidden\r\nx-svc-refused: 1\r\n\r\n');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    takeRefused() {
      const out = refused;
      refused = [];
      return out;
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
