import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { promises as dns } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { WebhookUrlError } from './errors.js';

/**
 * Which outbound URLs the service may call (SSRF rules, docs/decisions.md "Wallet monitor"). The same rules
 * serve webhook URLs now and provider endpoints later:
 * - `production`: https only; every address of the host must be public unicast (see {@link classifyAddress});
 * - `development`: the production rules, plus http or https to a loopback host (`localhost`,
 *   `*.localhost`, 127.0.0.0/8, `::1`, `::ffff:127.0.0.0/104`), nothing more.
 */
export type UrlPolicy = 'production' | 'development';

/**
 * What an address is for the SSRF rules: `public` (ipaddr.js `range()` is `unicast`), `loopback`,
 * or the ipaddr.js range name that makes it non-public (`private`, `linkLocal`, `uniqueLocal`,
 * `carrierGradeNat`, `reserved`, `unspecified`, `multicast`, `broadcast`, ...), or `invalid`.
 */
export type AddressClass = 'public' | 'loopback' | 'invalid' | (string & {});

/** The 32-bit IPv4 address in the IPv6 words `hi` and `lo` (16 bits each). */
const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 255, lo >> 8, lo & 255]);

/**
 * The IPv4 addresses an IPv6 address carries, when it is one of the IPv4-embedding forms
 * (undefined otherwise): IPv4-compatible `::a.b.c.d` (::/96, deprecated), IPv4-mapped
 * `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d` (RFC 6145), NAT64 `64:ff9b::a.b.c.d`
 * (RFC 6052 well-known prefix), 6to4 `2002:aabb:ccdd::/48` (RFC 3056), Teredo `2001:0::/32`
 * (RFC 4380: the server, and the client stored inverted). An empty list means "embeds an IPv4
 * address at a place we cannot know" (the RFC 8215 local-use NAT64 prefix `64:ff9b:1::/48`).
 */
function embeddedIpv4(addr: ipaddr.IPv6): ipaddr.IPv4[] | undefined {
  const p = addr.parts;
  const zeros = (from: number, to: number) => p.slice(from, to).every((w) => w === 0);
  switch (addr.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [v4(p[6], p[7])];
    case 'rfc6052':
      return p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6) ? [v4(p[6], p[7])] : [];
    case '6to4':
      return [v4(p[1], p[2])];
    case 'teredo':
      return [v4(p[2], p[3]), v4(p[6] ^ 0xffff, p[7] ^ 0xffff)];
    case 'unicast':
      return zeros(0, 6) ? [v4(p[6], p[7])] : undefined; // ::a.b.c.d (:: and ::1 have their own ranges)
    default:
      return undefined;
  }
}

/**
 * Classifies an IP literal (v4 or v6, without brackets) for the SSRF rules, with ipaddr.js ranges.
 * An IPv4-embedding IPv6 form is judged by the IPv4 address(es) it carries; when it carries several
 * (Teredo) the first non-public one decides. IPv4-mapped loopback (`::ffff:127.0.0.1`) is
 * `loopback`; the other embeddings of 127/8 (NAT64, 6to4, Teredo, `::127.0.0.1`) are `reserved`:
 * they do not reach this host, and they are not public.
 */
export function classifyAddress(ip: string): AddressClass {
  const family = isIP(ip); // strict: dotted-decimal IPv4 only (0x7f.1, 2130706433 never come from a URL or a resolver)
  if (family === 0) return 'invalid';
  if (family === 6 && ip.includes('%')) return 'linkLocal'; // a zone id only scopes link-local addresses
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // ipaddr.js 2 reads `::a.b.c.d` as `::ffff:a.b.c.d`: hand it the WHATWG parser's canonical text instead
    addr = ipaddr.parse(family === 6 ? new URL(`http://[${ip}]/`).hostname.slice(1, -1) : ip);
  } catch {
    return 'invalid';
  }
  if (addr instanceof ipaddr.IPv6) {
    const embedded = embeddedIpv4(addr);
    if (embedded) {
      if (embedded.length === 0) return 'reserved';
      for (const e of embedded) {
        const range = e.range();
        if (range === 'loopback') return addr.range() === 'ipv4Mapped' ? 'loopback' : 'reserved';
        if (range !== 'unicast') return range;
      }
      return 'public';
    }
  }
  const range = addr.range();
  return range === 'unicast' ? 'public' : range;
}

/** True when `ip` (v4 or v6 literal) is a public unicast address, also through any IPv4-embedding IPv6 form. */
export function isPublicAddress(ip: string): boolean {
  return classifyAddress(ip) === 'public';
}

const stripBrackets = (h: string) => (h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h);
/** `localhost` and `*.localhost` (RFC 6761: always loopback, never sent to DNS), with or without the final dot. */
const isLocalhostName = (h: string) => {
  const name = h.toLowerCase().replace(/\.+$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
};

/** True for loopback hosts: `localhost` (and `*.localhost`), 127.0.0.0/8, `::1`, `::ffff:127.x.y.z`. */
export function isLoopbackHost(hostname: string): boolean {
  const h = stripBrackets(hostname);
  return isLocalhostName(h) || (isIP(h) !== 0 && classifyAddress(h) === 'loopback');
}

/** Whether the policy lets a connection reach an address of class `c`. */
const allowedClass = (c: AddressClass, policy: UrlPolicy) => c === 'public' || (policy === 'development' && c === 'loopback');

/** Resolves a host name to every address (A and AAAA). */
export type HostResolver = (hostname: string) => Promise<string[]>;

const defaultResolver: HostResolver = async (hostname) => (await dns.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** Options of {@link checkPublicUrl}. */
export interface CheckPublicUrlOptions {
  /** DNS for host names (default: the system resolver, A and AAAA). */
  resolve?: HostResolver;
  /** The field named in error messages (default `webhook_url`). */
  field?: string;
}

/**
 * Checks an outbound URL (a subscriber's `webhook_url`, later a provider endpoint) against the
 * SSRF rules of `policy` (docs/decisions.md "Wallet monitor"; {@link UrlPolicy}) and returns the parsed URL.
 *
 * The host is taken from the WHATWG URL parser, which already turns every IPv4 spelling into
 * dotted decimal (`http://2130706433/`, `http://0x7f.1/`, `http://0177.0.0.1/` → `127.0.0.1`) and
 * IPv6 into its short form. An IP host is classified directly ({@link classifyAddress}, which
 * unwraps IPv4-embedding IPv6 forms); `localhost`/`*.localhost` is loopback without DNS; any other
 * name is resolved and every address it resolves to must be allowed.
 *
 * Rules: http or https only; no credentials; `production`: https, every address public unicast;
 * `development`: the same, plus a loopback host (`localhost`, `*.localhost` or a loopback IP literal)
 * over http or https, and https to a name whose addresses are each public or loopback.
 *
 * @throws {WebhookUrlError} with `reason`: `invalid_url`, `unsupported_scheme`, `credentials_in_url`,
 *   `https_required`, `private_address` (also loopback in production), `unresolvable_host`.
 */
export async function checkPublicUrl(raw: string, policy: UrlPolicy, opts: CheckPublicUrlOptions | HostResolver = {}): Promise<URL> {
  const { resolve = defaultResolver, field = 'webhook_url' } = typeof opts === 'function' ? { resolve: opts } : opts;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookUrlError('invalid_url', `${field} is not an absolute URL.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new WebhookUrlError('unsupported_scheme', `${field} must use https.`);
  if (url.username || url.password)
    throw new WebhookUrlError('credentials_in_url', `${field} must not carry credentials; verify the webhook-signature header instead.`);
  const host = stripBrackets(url.hostname);
  const refused = () =>
    new WebhookUrlError(
      'private_address',
      policy === 'development'
        ? `${field} must point to a public address or, in development, a loopback host.`
        : `${field} must not point to a loopback, private, link-local or other non-public address.`,
    );

  if (url.protocol === 'http:' && !(policy === 'development' && isLoopbackHost(host))) {
    throw new WebhookUrlError(
      'https_required',
      policy === 'development' ? `${field} must use https (http is accepted only for a loopback host in development).` : `${field} must use https.`,
    );
  }
  let classes: AddressClass[];
  if (isIP(host)) classes = [classifyAddress(host)];
  else if (isLocalhostName(host)) classes = ['loopback'];
  else {
    let addresses: string[];
    try {
      addresses = await resolve(host);
    } catch {
      throw new WebhookUrlError('unresolvable_host', `The host of ${field} (${host}) does not resolve.`);
    }
    if (addresses.length === 0) throw new WebhookUrlError('unresolvable_host', `The host of ${field} (${host}) does not resolve.`);
    classes = addresses.map(classifyAddress);
  }
  if (!classes.every((c) => allowedClass(c, policy))) throw refused();
  return url;
}

/**
 * Former name of {@link checkPublicUrl} (same rules): `checkWebhookUrl(raw, policy, resolve?)`.
 */
export const checkWebhookUrl = (raw: string, policy: UrlPolicy, resolve?: HostResolver): Promise<URL> => checkPublicUrl(raw, policy, { resolve });

type LookupCallback = (e: NodeJS.ErrnoException | null, a: LookupAddress[] | string, f?: number) => void;

/**
 * A `lookup` for node:http(s) requests that drops the addresses `policy` refuses ({@link checkPublicUrl}'s
 * rules, checked at connect time, so a host that re-resolves to a private address after the URL was
 * accepted, DNS rebinding, is still refused). Fails with code `ENONPUBLIC` when none is left.
 */
export function lookupForPolicy(policy: UrlPolicy): LookupFunction {
  return (hostname, options, callback) => {
    const cb = callback as LookupCallback;
    dnsLookup(hostname, { ...options, all: true, verbatim: true }, (err, addresses) => {
      if (err) return cb(err, [] as LookupAddress[]);
      const list = (addresses as unknown as LookupAddress[]).filter((a) => allowedClass(classifyAddress(a.address), policy));
      if (list.length === 0) {
        const e = new Error(`refusing to connect to a non-public address of ${hostname}`) as NodeJS.ErrnoException;
        e.code = 'ENONPUBLIC';
        return cb(e, [] as LookupAddress[]);
      }
      if ((options as { all?: boolean }).all) return cb(null, list);
      return cb(null, list[0].address, list[0].family);
    });
  };
}

/** The production {@link lookupForPolicy}: only public unicast addresses. */
export const publicOnlyLookup: LookupFunction = lookupForPolicy('production');

/** True when `policy` lets a connection reach the IP literal `ip` (for a URL whose host is an address). */
export function isAllowedAddress(ip: string, policy: UrlPolicy): boolean {
  return allowedClass(classifyAddress(ip), policy);
}
