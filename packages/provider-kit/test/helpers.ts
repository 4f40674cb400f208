/**
 * Test helpers: a signed call as the gateway sends it (Standard Webhooks headers over the exact
 * body, signed with the `standardwebhooks` package itself) and a random `whsec_` secret.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A fresh `whsec_` + base64(24 random bytes) secret, the shape the gateway issues. */
export function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export interface SignedCallOptions {
  /** `webhook-id` (default: the body's execution_id). */
  webhookId?: string;
  /** Signing time (default now). */
  at?: Date;
  /** Send this body instead of the signed one (tampering). */
  sendBody?: string;
  /** Extra headers. */
  headers?: Record<string, string>;
  /** Leave out the signature headers. */
  unsigned?: boolean;
}

/** POSTs `body` (object → JSON text, or raw text) to `url` signed with `secret`; returns status and parsed JSON. */
export async function signedCall(
  url: string,
  secret: string,
  body: unknown,
  opts: SignedCallOptions = {},
): Promise<{ status: number; json: any; headers: Headers }> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const executionId = typeof body === 'object' && body !== null ? String((body as { execution_id?: unknown }).execution_id) : 'exe_x';
  const id = opts.webhookId ?? executionId;
  const at = opts.at ?? new Date();
  const signature = new Webhook(secret).sign(id, at, text);
  const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
  if (!opts.unsigned) {
    headers['webhook-id'] = id;
    headers['webhook-timestamp'] = String(Math.floor(at.getTime() / 1000));
    headers['webhook-signature'] = signature;
  }
  const response = await fetch(url, { method: 'POST', headers, body: opts.sendBody ?? text });
  const raw = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    json = raw;
  }
  return { status: response.status, json, headers: response.headers };
}
