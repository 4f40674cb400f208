import { AcgError } from './errors.js';
import type { WalletEvent } from './walletMonitor.js';

/** The webhook's signature, timestamp or format is wrong: answer 4xx and ignore the body. */
export class WebhookVerificationError extends AcgError {
  override name = 'WebhookVerificationError';
}

/** Headers as Fetch `Headers`, or a plain object (Node's `IncomingHttpHeaders` works). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

/** Options of {@link verifyWebhook}. */
export interface VerifyWebhookOptions {
  /** Largest accepted distance between `webhook-timestamp` and now, seconds (default 300, as Standard Webhooks). */
  toleranceSeconds?: number;
  /** Clock, ms since epoch (tests). */
  now?: number;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const h = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(h).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : h[key];
  return Array.isArray(v) ? v[0] : v;
}

function base64ToBytes(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function bytesToBase64(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** Compares two strings in time independent of where they differ. */
function timingSafeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Verifies a wallet-monitor webhook (Standard Webhooks): `webhook-signature` must hold a `v1,`
 * HMAC-SHA256 (keyed with the base64 secret after `whsec_`) of `webhook-id.webhook-timestamp.body`,
 * and the timestamp must be within `toleranceSeconds` of now (replay protection). Pass the body
 * exactly as received (raw text or bytes, not re-serialized JSON). Returns the parsed event.
 * Deduplicate on `webhook-id`: a redelivery carries the same id.
 *
 * Uses WebCrypto (Node 20+, browsers, edge runtimes). Throws {@link WebhookVerificationError}.
 *
 * ```ts
 * const event = await verifyWebhook(secret, req.headers, rawBody);
 * ```
 */
export async function verifyWebhook(secret: string, headers: WebhookHeaders, body: string | Uint8Array, opts: VerifyWebhookOptions = {}): Promise<WalletEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header.');
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not a UNIX timestamp.');
  const now = Math.floor((opts.now ?? Date.now()) / 1000);
  const tolerance = opts.toleranceSeconds ?? 300;
  if (Math.abs(now - Number(timestamp)) > tolerance) throw new WebhookVerificationError('webhook-timestamp is too old or too new (possible replay).');

  let key: Uint8Array;
  try {
    key = base64ToBytes(secret.startsWith('whsec_') ? secret.slice(6) : secret);
  } catch (cause) {
    throw new WebhookVerificationError('The secret is not whsec_ followed by base64.', { cause });
  }
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const subtle = globalThis.crypto.subtle;
  const cryptoKey = await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await subtle.sign('HMAC', cryptoKey, new TextEncoder().encode(`${id}.${timestamp}.${text}`)));
  const expected = bytesToBase64(mac);
  const ok = signatures.split(' ').some((s) => {
    const [version, sig] = s.split(',');
    return version === 'v1' && sig !== undefined && timingSafeEqual(sig, expected);
  });
  if (!ok) throw new WebhookVerificationError('No webhook-signature matches: wrong secret, or the body or headers were changed.');
  try {
    return JSON.parse(text) as WalletEvent;
  } catch (cause) {
    throw new WebhookVerificationError('The webhook body is not JSON.', { cause });
  }
}
