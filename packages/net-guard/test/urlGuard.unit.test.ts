import type { LookupAddress } from 'node:dns';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPublicUrl, checkWebhookUrl, isLoopbackHost, isPublicAddress, lookupForPolicy, WebhookUrlError } from '../src/index.js';

const resolver = (map: Record<string, string[]>) => async (host: string) => {
  if (!(host in map)) throw new Error('ENOTFOUND');
  return map[host];
};
const dns = resolver({
  'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'internal.example.com': ['10.0.0.5'],
  'mixed.example.com': ['93.184.216.34', '192.168.0.10'],
  'meta.example.com': ['169.254.169.254'],
  'ula.example.com': ['fd00::1'],
  'linklocal.example.com': ['fe80::1%eth0'],
  'mapped.example.com': ['::ffff:10.1.1.1'],
  'nat64.example.com': ['64:ff9b::a9fe:a9fe'],
  'sixtofour.example.com': ['2002:c0a8:101::1'],
  'loop.example.com': ['127.0.0.1'],
  'loop6.example.com': ['::1', '::ffff:127.0.0.1'],
  'cgnat.example.com': ['100.64.1.1'],
});

/** The WebhookUrlError reason of a check, or undefined when the URL is accepted. */
async function reason(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(WebhookUrlError);
    return (e as WebhookUrlError).reason;
  }
}

const OK = undefined;
const PRIVATE = 'private_address';
const HTTPS = 'https_required';

// [url, production, development]: `development` must be the production rules plus loopback.
const TABLE: [string, string | undefined, string | undefined][] = [
  // public
  ['https://hooks.example.com/in?x=1', OK, OK],
  ['https://93.184.216.34/in', OK, OK],
  ['https://[2606:4700:4700::1111]/in', OK, OK],
  ['https://[::ffff:8.8.8.8]/in', OK, OK],
  ['https://[64:ff9b::8.8.8.8]/in', OK, OK],
  ['https://[2002:808:808::1]/in', OK, OK],
  ['https://[2001:0:808:808::f7f7:f7f7]/in', OK, OK], // Teredo, server 8.8.8.8, client 8.8.8.8
  // scheme and credentials
  ['http://hooks.example.com/in', HTTPS, HTTPS],
  ['http://93.184.216.34/in', HTTPS, HTTPS],
  ['http://10.0.0.1/in', HTTPS, HTTPS],
  ['http://loop.example.com/in', HTTPS, HTTPS], // http needs a loopback host, not a name that resolves to one
  ['ftp://hooks.example.com/in', 'unsupported_scheme', 'unsupported_scheme'],
  ['https://u:p@hooks.example.com/in', 'credentials_in_url', 'credentials_in_url'],
  ['not a url', 'invalid_url', 'invalid_url'],
  ['https://nowhere.example.com/in', 'unresolvable_host', 'unresolvable_host'],
  // loopback: refused in production, the only addition of development
  ['https://127.0.0.1/in', PRIVATE, OK],
  ['http://127.0.0.1:8080/in', HTTPS, OK],
  ['http://127.9.8.7/in', HTTPS, OK],
  ['https://[::1]/in', PRIVATE, OK],
  ['http://[::1]:9999/in', HTTPS, OK],
  ['https://[::ffff:127.0.0.1]/in', PRIVATE, OK],
  ['http://[::ffff:7f00:1]/in', HTTPS, OK],
  ['https://localhost/in', PRIVATE, OK],
  ['http://localhost:9999/in', HTTPS, OK],
  ['http://LOCALHOST./in', HTTPS, OK],
  ['https://hooks.localhost/in', PRIVATE, OK],
  ['http://a.b.localhost/in', HTTPS, OK],
  ['https://loop.example.com/in', PRIVATE, OK],
  ['https://loop6.example.com/in', PRIVATE, OK],
  // decimal, octal and hex IPv4 spellings (the URL parser rewrites them to dotted decimal)
  ['http://2130706433/in', HTTPS, OK],
  ['https://2130706433/in', PRIVATE, OK],
  ['https://0x7f.1/in', PRIVATE, OK],
  ['https://0x7f000001/in', PRIVATE, OK],
  ['https://0177.0.0.1/in', PRIVATE, OK],
  ['https://017700000001/in', PRIVATE, OK],
  ['https://127.1/in', PRIVATE, OK],
  ['https://127.0.0.1./in', PRIVATE, OK],
  ['https://167772161/in', PRIVATE, PRIVATE], // 10.0.0.1
  ['https://0xa9.0xfe.0xa9.0xfe/in', PRIVATE, PRIVATE], // 169.254.169.254
  ['https://3232235777/in', PRIVATE, PRIVATE], // 192.168.1.1
  ['https://0xac.0x10.1/in', PRIVATE, PRIVATE], // 172.16.0.1
  // private, link-local, metadata, CGNAT, reserved, multicast, broadcast, unspecified: refused in both
  ['https://169.254.169.254/latest/meta-data', PRIVATE, PRIVATE],
  ['https://10.0.0.1/in', PRIVATE, PRIVATE],
  ['https://10.255.255.255/in', PRIVATE, PRIVATE],
  ['https://172.16.0.1/in', PRIVATE, PRIVATE],
  ['https://172.31.255.254/in', PRIVATE, PRIVATE],
  ['https://192.168.1.1/in', PRIVATE, PRIVATE],
  ['https://100.64.0.1/in', PRIVATE, PRIVATE],
  ['https://0.0.0.0/in', PRIVATE, PRIVATE],
  ['https://192.0.2.1/in', PRIVATE, PRIVATE],
  ['https://198.18.0.1/in', PRIVATE, PRIVATE],
  ['https://240.0.0.1/in', PRIVATE, PRIVATE],
  ['https://224.0.0.1/in', PRIVATE, PRIVATE],
  ['https://255.255.255.255/in', PRIVATE, PRIVATE],
  ['https://[fe80::1]/in', PRIVATE, PRIVATE],
  ['https://[febf:ffff::1]/in', PRIVATE, PRIVATE],
  ['https://[fc00::1]/in', PRIVATE, PRIVATE],
  ['https://[fdff:ffff::1]/in', PRIVATE, PRIVATE],
  ['https://[ff02::1]/in', PRIVATE, PRIVATE],
  ['https://[::]/in', PRIVATE, PRIVATE],
  ['https://[2001:db8::1]/in', PRIVATE, PRIVATE],
  ['https://[100::1]/in', PRIVATE, PRIVATE],
  // IPv4-embedding IPv6 forms of loopback and private addresses (only IPv4-mapped loopback is loopback)
  ['https://[::127.0.0.1]/in', PRIVATE, PRIVATE], // IPv4-compatible
  ['https://[::7f00:1]/in', PRIVATE, PRIVATE],
  ['https://[::10.0.0.1]/in', PRIVATE, PRIVATE],
  ['https://[::ffff:0:7f00:1]/in', PRIVATE, PRIVATE], // IPv4-translated (RFC 6145)
  ['https://[::ffff:0:10.0.0.1]/in', PRIVATE, PRIVATE],
  ['https://[::ffff:7f00:1]/in', PRIVATE, OK], // IPv4-mapped
  ['https://[::ffff:10.0.0.1]/in', PRIVATE, PRIVATE],
  ['https://[::ffff:a9fe:a9fe]/in', PRIVATE, PRIVATE],
  ['https://[::ffff:c0a8:101]/in', PRIVATE, PRIVATE],
  ['https://[2002:7f00:1::]/in', PRIVATE, PRIVATE], // 6to4
  ['https://[2002:a9fe:a9fe::1]/in', PRIVATE, PRIVATE],
  ['https://[2002:c0a8:101:1:2:3:4:5]/in', PRIVATE, PRIVATE],
  ['https://[2002:a00:1::]/in', PRIVATE, PRIVATE],
  ['https://[64:ff9b::7f00:1]/in', PRIVATE, PRIVATE], // NAT64 well-known prefix
  ['https://[64:ff9b::127.0.0.1]/in', PRIVATE, PRIVATE],
  ['https://[64:ff9b::a9fe:a9fe]/in', PRIVATE, PRIVATE],
  ['https://[64:ff9b::10.0.0.1]/in', PRIVATE, PRIVATE],
  ['https://[64:ff9b:1::a00:1]/in', PRIVATE, PRIVATE], // NAT64 local-use prefix: the embedding is unknown
  ['https://[2001:0:a00:1::f7f7:f7f7]/in', PRIVATE, PRIVATE], // Teredo, server 10.0.0.1
  ['https://[2001:0:808:808::80ff:fffe]/in', PRIVATE, PRIVATE], // Teredo, client 127.0.0.1 (stored inverted)
  ['https://[2001:0:808:808::5601:5601]/in', PRIVATE, PRIVATE], // Teredo, client 169.254.169.254
  ['https://[2001:0:808:808::ffff:ffff]/in', PRIVATE, PRIVATE], // Teredo, client 0.0.0.0
  // host names whose addresses are not public
  ['https://internal.example.com/in', PRIVATE, PRIVATE],
  ['https://mixed.example.com/in', PRIVATE, PRIVATE],
  ['https://meta.example.com/in', PRIVATE, PRIVATE],
  ['https://ula.example.com/in', PRIVATE, PRIVATE],
  ['https://linklocal.example.com/in', PRIVATE, PRIVATE],
  ['https://mapped.example.com/in', PRIVATE, PRIVATE],
  ['https://nat64.example.com/in', PRIVATE, PRIVATE],
  ['https://sixtofour.example.com/in', PRIVATE, PRIVATE],
  ['https://cgnat.example.com/in', PRIVATE, PRIVATE],
];

describe('checkWebhookUrl / checkPublicUrl: the SSRF rules, per policy', () => {
  it.each(TABLE)('%s → production %s, development %s', async (url, production, development) => {
    expect(await reason(checkWebhookUrl(url, 'production', dns)), 'production').toBe(production);
    expect(await reason(checkWebhookUrl(url, 'development', dns)), 'development').toBe(development);
    // the general name applies the same rules
    expect(await reason(checkPublicUrl(url, 'production', { resolve: dns, field: 'endpoint' })), 'checkPublicUrl production').toBe(production);
    expect(await reason(checkPublicUrl(url, 'development', { resolve: dns })), 'checkPublicUrl development').toBe(development);
  });

  it('names the field in messages', async () => {
    await expect(checkPublicUrl('https://10.0.0.1/', 'production', { field: 'endpoint_url' })).rejects.toThrow(/^endpoint_url /);
  });
});

describe('isPublicAddress and isLoopbackHost', () => {
  it('refuses every non-unicast class and accepts public unicast', () => {
    for (const ip of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::127.0.0.1',
      '::ffff:0:7f00:1',
      '2002:7f00:1::',
      '64:ff9b::10.0.0.1',
      '2001:0:a00:1::f7f7:f7f7',
      'fe80::1%eth0',
      '0x7f.1',
      '2130706433',
      'not-an-ip',
    ]) {
      expect(isPublicAddress(ip), ip).toBe(false);
    }
    for (const ip of ['1.1.1.1', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::'])
      expect(isPublicAddress(ip), ip).toBe(true);
  });

  it('knows loopback hosts: localhost names, 127/8, ::1 and IPv4-mapped 127/8 only', () => {
    for (const h of ['localhost', 'api.localhost', 'localhost.', '127.0.0.2', '[::1]', '::ffff:127.0.0.1']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['example.com', 'localhost.example.com', '10.0.0.1', '[::127.0.0.1]', '64:ff9b::7f00:1', '2002:7f00:1::'])
      expect(isLoopbackHost(h), h).toBe(false);
  });
});

describe('lookupForPolicy: the same rules at connect time', () => {
  const lookup = (policy: 'production' | 'development', host: string) =>
    new Promise<{ code?: string; addresses?: LookupAddress[] }>((resolve) =>
      lookupForPolicy(policy)(host, { all: true }, (err, addresses) =>
        resolve(err ? { code: (err as NodeJS.ErrnoException).code } : { addresses: addresses as unknown as LookupAddress[] }),
      ),
    );
  it('localhost resolves to loopback: refused in production, allowed in development', async () => {
    expect((await lookup('production', 'localhost')).code).toBe('ENONPUBLIC');
    const dev = await lookup('development', 'localhost');
    expect(dev.addresses?.length).toBeGreaterThan(0);
    for (const a of dev.addresses ?? []) expect(isLoopbackHost(a.address)).toBe(true);
  });
});

// Any IPv4 address of a non-public range, in any IPv4-embedding IPv6 spelling, is refused in production.
describe('property: embedded private IPv4 is refused in production (fast-check)', () => {
  const ranges: [number, number][] = [
    [0x0a000000, 8], // 10/8
    [0xac100000, 12], // 172.16/12
    [0xc0a80000, 16], // 192.168/16
    [0x7f000000, 8], // 127/8
    [0xa9fe0000, 16], // 169.254/16
    [0x64400000, 10], // 100.64/10
    [0x00000000, 8], // 0/8
    [0xe0000000, 4], // 224/4
    [0xf0000000, 4], // 240/4
  ];
  const privateV4 = fc.tuple(fc.constantFrom(...ranges), fc.nat()).map(([[base, prefix], n]) => (base | (n & (2 ** (32 - prefix) - 1))) >>> 0);
  const hex16 = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16));
  const dotted = (v: number) => [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.');
  const words = (v: number) => [(v >>> 16).toString(16), (v & 0xffff).toString(16)];
  const inverted = (v: number) => words(~v >>> 0);
  const publicV4 = 0x08080808;
  const forms = fc.oneof(
    privateV4.map((v) => `::ffff:${dotted(v)}`),
    privateV4.map((v) => `::ffff:${words(v).join(':')}`),
    privateV4.map((v) => `0:0:0:0:0:ffff:${words(v).join(':')}`),
    privateV4.map((v) => `::${dotted(v)}`),
    privateV4.map((v) => `::${words(v).join(':')}`),
    privateV4.map((v) => `::ffff:0:${dotted(v)}`),
    privateV4.map((v) => `::ffff:0:${words(v).join(':')}`),
    privateV4.map((v) => `64:ff9b::${dotted(v)}`),
    privateV4.map((v) => `64:ff9b::${words(v).join(':')}`),
    fc.tuple(privateV4, hex16, hex16).map(([v, s, i]) => `2002:${words(v).join(':')}:${s}::${i}`),
    fc.tuple(privateV4, hex16, hex16).map(([v, f, p]) => `2001:0:${words(v).join(':')}:${f}:${p}:${inverted(publicV4).join(':')}`),
    fc.tuple(privateV4, hex16, hex16).map(([v, f, p]) => `2001:0:${words(publicV4).join(':')}:${f}:${p}:${inverted(v).join(':')}`),
  );
  const numeric = fc
    .tuple(privateV4, fc.constantFrom('dec', 'hex', 'oct', 'dotted-hex'))
    .map(([v, how]) =>
      how === 'dec'
        ? String(v)
        : how === 'hex'
          ? `0x${v.toString(16)}`
          : how === 'oct'
            ? `0${v.toString(8)}`
            : [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].map((b) => `0x${b.toString(16)}`).join('.'),
    );
  it('isPublicAddress refuses it, and checkPublicUrl refuses it as a URL host (also spelled as a decimal, hex or octal IPv4)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(forms, numeric), async (host) => {
        if (host.includes(':')) expect(isPublicAddress(host), host).toBe(false);
        const url = host.includes(':') ? `https://[${host}]/hook` : `https://${host}/hook`;
        expect(await reason(checkPublicUrl(url, 'production', { resolve: dns })), url).toBe(PRIVATE);
      }),
      { numRuns: 800 },
    );
  });
});
