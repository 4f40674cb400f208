import { describe, expect, it } from 'vitest';
import { redactText, secretValuesFromEnv } from '../src/redact.js';

describe('redactText', () => {
  it('keeps scheme, host and port of each URL and drops user info, path, query and fragment', () => {
    expect(redactText('URL: https://base-mainnet.example.com/v2/KEY123\nRequest body: {}')).toBe('URL: https://base-mainnet.example.com/…\nRequest body: {}');
    expect(redactText('"url":"https://u:p@rpc.example.com:8545/a?key=1#f","x":1')).toBe('"url":"https://rpc.example.com:8545/…","x":1');
    expect(redactText('redis://default:pw@10.0.0.1:6379')).toBe('redis://10.0.0.1:6379');
    expect(redactText('wss://node.example/ws/abc and (http://h.example/p)')).toBe('wss://node.example/… and (http://h.example/…)');
    expect(redactText('no url here: 0xabc, a/b/c')).toBe('no url here: 0xabc, a/b/c');
  });

  it('masks every occurrence of each secret value', () => {
    expect(redactText('k=supersecret1 and again supersecret1', ['supersecret1'])).toBe('k=[redacted] and again [redacted]');
  });
});

describe('secretValuesFromEnv', () => {
  it('lists the values of *_KEY, *_SECRET, *_TOKEN and *PASSWORD* variables of 8+ characters, hex keys also without 0x', () => {
    const values = secretValuesFromEnv({
      FACILITATOR_PRIVATE_KEY: '0xabcdef0123456789',
      ADMIN_TOKEN: 'admin-token-123',
      REDIS_PASSWORD_FILE: 'password1',
      WEBHOOK_SECRET: 'short',
      GATEWAY_PORT: '80808080',
    });
    expect(values.sort()).toEqual(['0xabcdef0123456789', 'abcdef0123456789', 'admin-token-123', 'password1'].sort());
  });
});
