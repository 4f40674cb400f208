import type { GatewayContext } from '../context.js';
import { jsonOf, request, type GatewayResponse } from '../http.js';
import { AcgError, GatewayError, UnknownCapabilityError } from '../errors.js';
import { parseProblem } from '../protocol.js';

/**
 * Throws the error of a non-2xx answer: {@link UnknownCapabilityError} for a 404 about a
 * capability when `capabilityId` is given, else {@link GatewayError} with the RFC 9457 problem.
 */
export function throwForStatus(r: GatewayResponse, capabilityId?: string): never {
  const problem = parseProblem(r.response.status, r.text);
  if (capabilityId && r.response.status === 404 && /capabilit/i.test(problem.detail)) throw new UnknownCapabilityError(capabilityId, { problem });
  throw new GatewayError(problem);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** POST a JSON body (no payment) and return the JSON answer; non-2xx throws {@link GatewayError}. */
export async function postJson<T>(ctx: GatewayContext, path: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
  const r = await request(ctx, path, { method: 'POST', body: JSON.stringify(body), headers });
  if (!r.response.ok) throwForStatus(r);
  return jsonOf<T>(ctx, path, r);
}

/** A bearer-authenticated JSON call (wallet monitor, account); throws {@link AcgError} without a token. */
export async function bearerJson<T>(ctx: GatewayContext, accessToken: string | undefined, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  if (!accessToken) throw new AcgError('This endpoint needs a bearer token: sign in first (signIn / client.auth.signIn()).');
  const r = await request(ctx, path, {
    method,
    headers: { authorization: `Bearer ${accessToken}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!r.response.ok) throwForStatus(r);
  return jsonOf<T>(ctx, path, r);
}
