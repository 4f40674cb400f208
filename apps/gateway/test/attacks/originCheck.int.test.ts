import { describe, expect, it } from 'vitest';
import { useTestGateway } from '../useTestGateway.js';
import { bearerToken } from '../x402.js';

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
});
