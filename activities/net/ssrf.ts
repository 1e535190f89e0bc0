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
 * `SVC_ALLOW_PRIVATE_FETCH`: `true` lets every fetch reach private addresses (local development);
 * a list lets through only these addresses, CIDR ranges and host names (e.g. a test's first hop on
 * 127.0.0.2/32, or an intranet host), everything else stays refused; `false` refuses all.
 */
export type PrivateFetchPolicy = boolean | readonly string[];

interface AllowList {
  v4: BlockList;
  v6: BlockList;
  hosts: Set<string>;
}
const compiled = new WeakMap<readonly string[], AllowList>();

/** Parses one allow-list entry (address, CIDR or host name); undefined when it is none of these. */
export function allowEntry(raw: string): { net: string; prefix: number; family: 4 | 6 } | { host: string } | undefined {
  const entry = raw
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  const [addr, bits, extra] = entry.split('/');
  const family = isIP(addr);
  if (family) {
    const max = family === 4 ? 32 : 128;
    const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
    if (extra !== undefined || !(prefix >= 0 && prefix <= max)) return undefined;
    return { net: addr, prefix, family: family === 4 ? 4 : 6 };
  }
  if (bits === undefined && /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?\.?$/.test(entry))
    return { host: entry.replace(/\.$/, '') };
  return undefined;
}

function compile(list: readonly string[]): AllowList {
  let out = compiled.get(list);
  if (out) return out;
  out = { v4: new BlockList(), v6: new BlockList(), hosts: new Set() };
  for (const raw of list) {
    const e = allowEntry(raw);
    if (!e) continue; // the config schema refused bad entries already
    if ('host' in e) out.hosts.add(e.host);
    else if (e.family === 4) out.v4.addSubnet(e.net, e.prefix, 'ipv4');
    else out.v6.addSubnet(e.net, e.prefix, 'ipv6');
  }
  compiled.set(list, out);
  return out;
}

/**
 * True when the policy lets this private host (name or literal) or resolved address through:
 * `true` always; a list when the host name or the address is on it. IPv4-mapped IPv6 addresses
 * are matched as their IPv4 address.
 */
export function privateAllowed(policy: PrivateFetchPolicy, host: string, address?: string): boolean {
  if (policy === true) return true;
  if (!policy || !policy.length) return false;
  const list = compile(policy);
  const name = host
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (list.hosts.has(name)) return true;
  if (address === undefined) return false;
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0];
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(bare)?.[1];
  const v4 = mapped ?? (isIP(bare) === 4 ? bare : undefined);
  if (v4) return list.v4.check(v4, 'ipv4');
  return isIP(bare) === 6 && list.v6.check(bare, 'ipv6');
}

/**
 * A `lookup` for http(s).request that refuses non-public answers with `makeError(hostname, address)`
 * unless the policy allows them. The connection uses the address checked here, so DNS rebinding
 * between check and connect is not possible.
 */
export function guardedLookup(
  allowPrivate: PrivateFetchPolicy,
  makeError: (hostname: string, address: string) => Error,
): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as LookupAddress[];
      if (!list.length)
        return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      const bad =
        allowPrivate === true
          ? undefined
          : list.find((a) => isPrivateAddress(a.address) && !privateAllowed(allowPrivate, hostname, a.address));
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
  allowPrivate: PrivateFetchPolicy;
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
  if (policy.allowPrivate === true) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, ''); // a trailing dot is the same name
  if (isIP(host)) {
    if (isPrivateAddress(host) && !privateAllowed(policy.allowPrivate, host, host))
      throw policy.makeError({ reason: 'private-address', url, host });
  } else if (policy.refuseLocalNames && LOCAL_NAME.test(host) && !privateAllowed(policy.allowPrivate, host)) {
    throw policy.makeError({ reason: 'local-name', url, host });
  }
  return url;
}
