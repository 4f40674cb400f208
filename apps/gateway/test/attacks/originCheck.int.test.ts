import { describe, expect, it } from 'vitest';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { createSIWxPayload, encodeSIWxHeader, SIGN_IN_WITH_X, type SIWxExtension } from '@x402/extensions/sign-in-with-x';
import { useTestGateway } from '../useTestGateway.js';
import { bearerToken, challenge, officialPayload, paymentHeader, post, walletBalancesRequest } from '../x402.js';

/**
 * Attack (issue 23 item 10): a web page on a foreign origin (DNS rebinding, or a site the user
 * visits) drives `/mcp` or a bearer-token route from the user's browser. The gateway refuses a
 * foreign `Origin` with 403 there; its own origin, ALLOWED_ORIGINS and requests without `Origin`
 * (agents) are unaffected, and CORS preflights answer the same way.
 */
const EVIL = 'http://evil.example.com';
const APP = 'https://app.example.com';
const t = useTestGateway({ config: { allowedOrigins: [APP] } });

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'attack', version: '1.0.0' } },
};

function mcp(origin?: string) {
  return fetch(`${t.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(origin ? { origin } : {}) },
    body: JSON.stringify(initialize),
  });
}

async function account(origin: string | undefined) {
  const token = await bearerToken(t.url, t.stack.payment.buyers[0]);
  return fetch(`${t.url}/v1/account`, { headers: { authorization: `Bearer ${token}`, ...(origin ? { origin } : {}) } });
}

describe('Origin validation (DNS rebinding, cross-site use of a bearer token)', () => {
  it('refuses an MCP initialize from a foreign Origin with 403 and a JSON-RPC error', async () => {
    const res = await mcp(EVIL);
    expect(res.status).toBe(403);
    const body = (await res.json()) as { error: { message: string } };
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    expect(body.error.message).toContain(EVIL);
    // `Origin: null` (a sandboxed frame) is foreign too
    expect((await mcp('null')).status).toBe(403);
  });

  it('answers MCP from its own origin, its loopback aliases, ALLOWED_ORIGINS and without Origin', async () => {
    const own = new URL(t.url);
    for (const origin of [own.origin, `http://localhost:${own.port}`, APP, undefined]) {
      const res = await mcp(origin);
      expect(res.status, String(origin)).toBe(200);
      expect(((await res.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name).toBe('agent-capability-gateway');
    }
  });

  it('refuses a bearer-token route from a foreign Origin with 403 problem+json, nothing read', async () => {
    const res = await account(EVIL);
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const body = await res.json();
    expect(body).toMatchObject({ status: 403, reason: 'origin_not_allowed' });
    expect(body).not.toHaveProperty('balance');
    // a wallet-monitor subscription cannot be created either (a POST acting on the token)
    const token = await bearerToken(t.url, t.stack.payment.buyers[0]);
    const sub = await fetch(`${t.url}/v1/wallet-monitor`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, origin: EVIL, 'content-type': 'application/json' },
      body: JSON.stringify({
        chains: ['base'],
        events: ['transfer_in'],
        addresses: [t.stack.payment.buyers[1].address],
        webhook_url: 'https://hooks.example.com/x',
      }),
    });
    expect(sub.status).toBe(403);
  });

  it('serves the bearer route to its own origin, ALLOWED_ORIGINS and agents without Origin', async () => {
    for (const origin of [new URL(t.url).origin, APP, undefined]) expect((await account(origin)).status, String(origin)).toBe(200);
  });

  it('leaves public reads from any origin alone (CORS *)', async () => {
    const res = await fetch(`${t.url}/registry`, { headers: { origin: EVIL } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('refuses the CORS preflight of a foreign MCP or bearer request, and allows its own', async () => {
    const preflight = (path: string, origin: string, headers: string) =>
      fetch(`${t.url}${path}`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': headers },
      });
    expect((await preflight('/mcp', EVIL, 'content-type')).status).toBe(403);
    expect((await preflight('/v1/account', EVIL, 'authorization')).status).toBe(403);
    // a foreign preflight without a token (e.g. an unpaid execute) stays open: CORS *
    expect((await preflight('/api/v1/execute', EVIL, 'content-type')).status).toBe(204);
    const own = await preflight('/mcp', new URL(t.url).origin, 'content-type, authorization');
    expect(own.status).toBe(204);
    expect(own.headers.get('access-control-allow-headers')).toContain('Authorization');
  });

  it('treats SIGN-IN-WITH-X like Authorization: a foreign preflight naming it and a foreign request carrying it are refused (issue 36 item 6)', async () => {
    const preflight = await fetch(`${t.url}/api/v1/executions/exe_01JZZZZZZZZZZZZZZZZZZZZZZZ`, {
      method: 'OPTIONS',
      headers: { origin: EVIL, 'access-control-request-method': 'GET', 'access-control-request-headers': 'sign-in-with-x' },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    // a valid proof of the payer of a real execution, sent from the foreign origin: nothing read, no token
    const payer = t.stack.payment.buyers[0];
    const required = await challenge(t.executeUrl, walletBalancesRequest(payer.address));
    const paid = await post(t.executeUrl, walletBalancesRequest(payer.address), { 'PAYMENT-SIGNATURE': paymentHeader(await officialPayload(payer, required)) });
    expect(paid.status).toBe(200);
    const url = `${t.url}/api/v1/executions/${paid.body.execution_id}`;
    const proof = async () => {
      const ext = decodePaymentRequiredHeader((await fetch(url)).headers.get('payment-required')!).extensions?.[SIGN_IN_WITH_X] as SIWxExtension;
      return encodeSIWxHeader(await createSIWxPayload({ ...ext.info, chainId: 'eip155:8453', type: 'eip191' }, payer, url));
    };
    const foreign = await fetch(url, { headers: { origin: EVIL, [SIGN_IN_WITH_X]: await proof() } });
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ status: 403, reason: 'origin_not_allowed' });
    expect(foreign.headers.get('authentication-info')).toBeNull();
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    // from an allowed origin it signs in, and only that origin may read the answer (never `*` with a credential)
    const allowed = await fetch(url, { headers: { origin: APP, [SIGN_IN_WITH_X]: await proof() } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('authentication-info')).toContain('access_token=');
    expect(allowed.headers.get('access-control-allow-origin')).toBe(APP);
    expect(allowed.headers.get('vary')).toContain('Origin');
    const own = await preflight_(APP, 'sign-in-with-x');
    expect(own.status).toBe(204);
    expect(own.headers.get('access-control-allow-origin')).toBe(APP);
  });

  it('answers a bearer request from an allowed origin with that origin, not `*`', async () => {
    const res = await account(APP);
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
  });
});

function preflight_(origin: string, headers: string) {
  return fetch(`${t.url}/v1/account`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': headers },
  });
}
