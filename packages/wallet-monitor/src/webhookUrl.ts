import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { promises as dns } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { WebhookPolicy } from './config.js';
import { WebhookUrlError } from './errors.js';

/**
 * Addresses a webhook may never reach in production (SSRF): unspecified, loopback, private
 * (RFC 1918, ULA), carrier-grade NAT, link-local, documentation and benchmark ranges, multicast,
 * reserved, and IPv6 forms that embed one of them (IPv4-mapped, NAT64 are checked on the
 * embedded IPv4 address).
 */
const NON_PUBLIC = new BlockList();
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
] as const) {
  NON_PUBLIC.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001:db8::', 32],
  ['2001::', 23],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  NON_PUBLIC.addSubnet(net, prefix, 'ipv6');
}

/** The IPv4 address embedded in an IPv4-mapped (`::ffff:a.b.c.d`) or NAT64 (`64:ff9b::/96`) IPv6 address. */
function embeddedIpv4(ip: string): string | undefined {
  const m = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(ip);
  if (!m) return undefined;
  if (m[1]) return m[1];
  const hi = parseInt(m[2], 16);
  const lo = parseInt(m[3], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** True when `ip` (v4 or v6 literal) is a public unicast address a webhook may reach in production. */
export function isPublicAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 0) return false;
  if (family === 4) return !NON_PUBLIC.check(ip, 'ipv4');
  const v4 = embeddedIpv4(ip);
  if (v4) return !NON_PUBLIC.check(v4, 'ipv4');
  return !NON_PUBLIC.check(ip, 'ipv6');
}

/** True for loopback hosts: `localhost` (and `*.localhost`), 127.0.0.0/8, `::1`. */
export function isLoopbackHost(hostname: string): boolean {
  const h = stripBrackets(hostname).toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || embeddedIpv4(h)?.startsWith('127.') === true;
  return false;
}

const stripBrackets = (h: string) => (h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h);

/** Resolves a host name to every address (A and AAAA). */
export type HostResolver = (hostname: string) => Promise<string[]>;

const defaultResolver: HostResolver = async (hostname) => (await dns.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Checks a subscriber's `webhook_url` against the policy (DESIGN "Wallet monitor") and returns
 * the parsed URL. Production: https only, no credentials, and every address the host resolves to
 * must be public (a private, loopback or link-local address is refused, SSRF). Development: https
 * anywhere, or http to a loopback host. Throws {@link WebhookUrlError} with a `reason`.
 */
export async function checkWebhookUrl(raw: string, policy: WebhookPolicy, resolve: HostResolver = defaultResolver): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookUrlError('invalid_url', 'webhook_url is not an absolute URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new WebhookUrlError('unsupported_scheme', 'webhook_url must use https.');
  if (url.username || url.password) throw new WebhookUrlError('credentials_in_url', 'webhook_url must not carry credentials; verify the webhook-signature header instead.');
  const host = stripBrackets(url.hostname);
  if (policy === 'development') {
    if (url.protocol === 'http:' && !isLoopbackHost(host)) {
      throw new WebhookUrlError('https_required', 'webhook_url must use https (http is accepted only for a loopback host in development).');
    }
    return url;
  }
  if (url.protocol !== 'https:') throw new WebhookUrlError('https_required', 'webhook_url must use https.');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    if (host.toLowerCase() === 'localhost' || host.toLowerCase().endsWith('.localhost')) {
      throw new WebhookUrlError('private_address', 'webhook_url must not point to a loopback, private or link-local address.');
    }
    try {
      addresses = await resolve(host);
    } catch {
      throw new WebhookUrlError('unresolvable_host', `The host of webhook_url (${host}) does not resolve.`);
    }
    if (addresses.length === 0) throw new WebhookUrlError('unresolvable_host', `The host of webhook_url (${host}) does not resolve.`);
  }
  if (!addresses.every(isPublicAddress)) {
    throw new WebhookUrlError('private_address', 'webhook_url must not point to a loopback, private or link-local address.');
  }
  return url;
}

/**
 * A `lookup` for node:http(s) requests that refuses non-public addresses (production deliveries):
 * the address is checked at connect time, so a host that re-resolves to a private address after
 * the subscription was accepted (DNS rebinding) is still refused.
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true, verbatim: true }, (err, addresses) => {
    if (err) return (callback as (e: NodeJS.ErrnoException | null, a: LookupAddress[] | string, f?: number) => void)(err, [] as LookupAddress[]);
    const list = (addresses as unknown as LookupAddress[]).filter((a) => isPublicAddress(a.address));
    const cb = callback as (e: NodeJS.ErrnoException | null, a: LookupAddress[] | string, f?: number) => void;
    if (list.length === 0) {
      const e = new Error(`refusing to connect to a non-public address of ${hostname}`) as NodeJS.ErrnoException;
      e.code = 'ENONPUBLIC';
      return cb(e, [] as LookupAddress[]);
    }
    if ((options as { all?: boolean }).all) return cb(null, list);
    return cb(null, list[0].address, list[0].family);
  });
};
