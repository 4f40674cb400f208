import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const PREFIX = 'enc:v1:';

/**
 * Encrypts webhook signing secrets at rest (AES-256-GCM, a random 96-bit IV per secret): Redis
 * holds `enc:v1:<iv>:<tag>:<ciphertext>` (base64url), never the `whsec_…` text. The key comes
 * from `WEBHOOK_SECRET_KEY` (32 bytes as 64 hex characters or base64); the gateway (which creates
 * subscriptions) and the workers (which sign deliveries) must share it.
 */
export class SecretBox {
  private readonly key: Buffer;
  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('the webhook secret key must be 32 bytes');
    this.key = key;
  }

  /** `enc:v1:...` for `plain`. */
  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${PREFIX}${iv.toString('base64url')}:${cipher.getAuthTag().toString('base64url')}:${ct.toString('base64url')}`;
  }

  /**
   * The plain secret of a stored value; a value without the `enc:v1:` prefix (stored before a key
   * was configured) is returned as it is. Throws when the value was tampered with or sealed with another key.
   */
  open(stored: string): string {
    if (!stored.startsWith(PREFIX)) return stored;
    const [iv, tag, ct] = stored.slice(PREFIX.length).split(':');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/** A SecretBox from a 32-byte key given as 64 hex characters or base64; undefined when `key` is empty. Throws on a malformed key. */
export function secretBoxFromKey(key: string | undefined): SecretBox | undefined {
  if (!key) return undefined;
  const bytes = /^[0-9a-fA-F]{64}$/.test(key) ? Buffer.from(key, 'hex') : Buffer.from(key, 'base64');
  if (bytes.length !== 32) throw new Error('WEBHOOK_SECRET_KEY must be 32 bytes: 64 hex characters or base64');
  return new SecretBox(bytes);
}
