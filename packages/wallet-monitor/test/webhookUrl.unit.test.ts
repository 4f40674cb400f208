import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, isLoopbackHost, isPublicAddress, WebhookUrlError } from '../src/index.js';

const resolver = (map: Record<string, string[]>) => async (host: string) => {
  if (!(host in map)) throw new Error('ENOTFOUND');
  return map[host];
};

async function reason(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(WebhookUrlError);
    return (e as WebhookUrlError).reason;
  }
}

describe('isPublicAddress', () => {
  it('refuses loopback, private, link-local, CGNAT, ULA, multicast and mapped forms', () => {
    for (const ip of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:a9fe:a9fe', '64:ff9b::10.0.0.1']) {
      expect(isPublicAddress(ip), ip).toBe(false);
    }
  });
  it('accepts public unicast addresses', () => {
    for (const ip of ['1.1.1.1', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isPublicAddress(ip), ip).toBe(true);
  });
  it('knows loopback hosts', () => {
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('127.0.0.2')).toBe(true);
    expect(isLoopbackHost('[::1]')).toBe(true);
    expect(isLoopbackHost('example.com')).toBe(false);
  });
});

describe('checkWebhookUrl, production', () => {
  const dns = resolver({ 'hooks.example.com': ['93.184.216.34'], 'internal.example.com': ['10.0.0.5'], 'mixed.example.com': ['93.184.216.34', '192.168.0.10'], 'meta.example.com': ['169.254.169.254'] });
  it('accepts https to a host that resolves only to public addresses', async () => {
    expect((await checkWebhookUrl('https://hooks.example.com/in?x=1', 'production', dns)).hostname).toBe('hooks.example.com');
    expect(await reason(checkWebhookUrl('https://93.184.216.34/in', 'production', dns))).toBeUndefined();
  });
  it('refuses http, private and metadata addresses (also behind DNS), localhost, credentials and unresolvable hosts', async () => {
    expect(await reason(checkWebhookUrl('http://hooks.example.com/in', 'production', dns))).toBe('https_required');
    expect(await reason(checkWebhookUrl('http://127.0.0.1:8080/in', 'production', dns))).toBe('https_required');
    expect(await reason(checkWebhookUrl('https://internal.example.com/in', 'production', dns))).toBe('private_address');
    expect(await reason(checkWebhookUrl('https://mixed.example.com/in', 'production', dns))).toBe('private_address');
    expect(await reason(checkWebhookUrl('https://meta.example.com/in', 'production', dns))).toBe('private_address');
    expect(await reason(checkWebhookUrl('https://10.0.0.1/in', 'production', dns))).toBe('private_address');
    expect(await reason(checkWebhookUrl('https://[::1]/in', 'production', dns))).toBe('private_address');
    expect(await reason(checkWebhookUrl('https://localhost/in', 'production', dns))).toBe('private_address');
    expect(await reason(checkWebhookUrl('https://u:p@hooks.example.com/in', 'production', dns))).toBe('credentials_in_url');
    expect(await reason(checkWebhookUrl('https://nowhere.example.com/in', 'production', dns))).toBe('unresolvable_host');
    expect(await reason(checkWebhookUrl('ftp://hooks.example.com/in', 'production', dns))).toBe('unsupported_scheme');
    expect(await reason(checkWebhookUrl('not a url', 'production', dns))).toBe('invalid_url');
  });
});

describe('checkWebhookUrl, development', () => {
  it('allows http only to loopback, https anywhere', async () => {
    expect(await reason(checkWebhookUrl('http://127.0.0.1:9999/hook', 'development'))).toBeUndefined();
    expect(await reason(checkWebhookUrl('http://localhost:9999/hook', 'development'))).toBeUndefined();
    expect(await reason(checkWebhookUrl('http://[::1]:9999/hook', 'development'))).toBeUndefined();
    expect(await reason(checkWebhookUrl('https://10.0.0.1/hook', 'development'))).toBeUndefined();
    expect(await reason(checkWebhookUrl('http://example.com/hook', 'development'))).toBe('https_required');
    expect(await reason(checkWebhookUrl('http://10.0.0.1/hook', 'development'))).toBe('https_required');
  });
});
