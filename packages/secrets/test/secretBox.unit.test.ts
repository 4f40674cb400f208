import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox, secretBoxFromKey } from '../src/index.js';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));
  it('seals a secret so the stored text does not contain it, and opens it back', () => {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const sealed = box.seal(secret);
    expect(sealed.startsWith('enc:v1:')).toBe(true);
    expect(sealed).not.toContain(secret.slice(6));
    expect(box.seal(secret)).not.toBe(sealed); // a fresh IV each time
    expect(box.open(sealed)).toBe(secret);
  });
  it('refuses a tampered value or another key, and passes plaintext stored before a key existed', () => {
    const sealed = box.seal('whsec_abc');
    const parts = sealed.split(':');
    parts[4] = Buffer.from('other').toString('base64url');
    expect(() => box.open(parts.join(':'))).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed)).toThrow();
    expect(box.open('whsec_plain')).toBe('whsec_plain');
  });
  it('reads the key as 64 hex characters or base64 of 32 bytes, and refuses other lengths', () => {
    const key = randomBytes(32);
    const a = secretBoxFromKey(key.toString('hex'))!;
    const b = secretBoxFromKey(key.toString('base64'))!;
    expect(b.open(a.seal('whsec_x'))).toBe('whsec_x');
    expect(secretBoxFromKey(undefined)).toBeUndefined();
    expect(() => secretBoxFromKey('abcd')).toThrow(/32 bytes/);
  });
});
