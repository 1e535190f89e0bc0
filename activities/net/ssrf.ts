import dns, { type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

// The SSRF guard shared by every server-side fetch (knowledge web ingest, task fetch and webhook
// steps). Each caller keeps its own error types and wording: it passes the error to throw.

// Two lists: Node's BlockList matches IPv4 addresses against IPv4-mapped IPv6 rules too.
const blocked4 = new BlockList();
const blocked6 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked4.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  // ::/96 = IPv4-compatible (deprecated; [::127.0.0.1] is loopback on some stacks, and it covers :: and ::1),
  // ::ffff:0:0/96 mapped, ::ffff:0:0:0/96 SIIT-translated, 64:ff9b::/96 and 64:ff9b:1::/48 NAT64.
  ['::', 96],
  ['::ffff:0:0', 96],
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  blocked6.addSubnet(net, prefix, 'ipv6');

/** True for loopback, private, link-local, shared, multicast, documentation and other non-public addresses (and for non-addresses). */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0];
  const family = isIP(bare);
  if (family === 0) return true;
  if (family === 6) {
    const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(bare);
    if (mapped) return isPrivateAddress(mapped[1]);
    return blocked6.check(bare, 'ipv6');
  }
  return blocked4.check(bare, 'ipv4');
}

/**
 * A `lookup` for http(s).request that refuses non-public answers with `makeError(hostname, address)`
 * unless `allowPrivate`. The connection uses the address checked here, so DNS rebinding between
 * check and connect is not possible.
 */
export function guardedLookup(
  allowPrivate: boolean,
  makeError: (hostname: string, address: string) => Error,
): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as LookupAddress[];
      if (!list.length)
        return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      const bad = allowPrivate ? undefined : list.find((a) => isPrivateAddress(a.address));
      if (bad) return callback(makeError(hostname, bad.address), '', 0);
      if (options.all) callback(null, list);
      else callback(null, list[0].address, list[0].family);
    });
  };
}

/** Why a URL is refused before any connection; `host` is the bare hostname (no brackets, no port). */
export type UrlRefusal =
  | { reason: 'invalid'; raw: string }
  | { reason: 'scheme' | 'credentials'; url: URL }
  | { reason: 'private-address' | 'local-name'; url: URL; host: string };

export interface UrlPolicy {
  allowPrivate: boolean;
  /** Also refuse, without resolving them, names that are local by convention (localhost, *.localhost, *.local, *.internal). */
  refuseLocalNames?: boolean;
  /** The error to throw for a refused URL. */
  makeError: (refusal: UrlRefusal) => Error;
}

const LOCAL_NAME = /^(localhost|.*\.localhost|.*\.local|.*\.internal)$/i;

/**
 * Checks a URL before any connection: it parses, is http(s), carries no credentials and, unless
 * private fetches are allowed, an IP-literal host is public (literals skip `lookup`, so this is
 * their only check). Returns the parsed URL.
 * @throws the error `policy.makeError` returns for the first problem found
 */
export function checkUrl(raw: string | URL, policy: UrlPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw policy.makeError({ reason: 'invalid', raw: String(raw) });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw policy.makeError({ reason: 'scheme', url });
  if (url.username || url.password) throw policy.makeError({ reason: 'credentials', url });
  if (policy.allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, ''); // a trailing dot is the same name
  if (isIP(host)) {
    if (isPrivateAddress(host)) throw policy.makeError({ reason: 'private-address', url, host });
  } else if (policy.refuseLocalNames && LOCAL_NAME.test(host)) {
    throw policy.makeError({ reason: 'local-name', url, host });
  }
  return url;
}
