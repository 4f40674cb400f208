import { gatewayJobs } from '@acg/capabilities';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { createSIWxPayload, encodeSIWxHeader, SIGN_IN_WITH_X, wrapFetchWithSIWx, type SIWxExtension } from '@x402/extensions/sign-in-with-x';
import type { LocalAccount } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { challenge, officialPayload, paymentHeader, post, walletBalancesRequest } from './x402.js';

/**
 * x402 `sign-in-with-x` (apps/gateway README "Sign-in-with-x") on real anvil and Redis: every 402
 * carries a fresh challenge; `GET /api/v1/executions/{id}` without credentials is a 402 that the
 * official `wrapFetchWithSIWx` of @x402/extensions answers by itself, for the payer only; the
 * proof also gives a bearer token (Authentication-Info) of the same kind as Sign-In with
 * Ethereum's; a proof is single use, bound to the gateway's origin and the payment chain.
 */

let t: TestGateway;
let payer: LocalAccount;
let other: LocalAccount;
let executionId: string;

/** The sign-in-with-x extension of a 402 (header and body must carry the same). */
function siwxOf(res: { status: number; headers: Headers; body: Record<string, any> }): SIWxExtension {
  expect(res.status).toBe(402);
  const header = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
  expect(res.body.extensions[SIGN_IN_WITH_X]).toEqual(header.extensions?.[SIGN_IN_WITH_X]);
  return header.extensions?.[SIGN_IN_WITH_X] as SIWxExtension;
}

const getJson = async (url: string, headers: Record<string, string> = {}) => {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
};

/** A fetch that records the SIGN-IN-WITH-X header of every request it sends. */
function recording(sent: string[]): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const h = request.headers.get(SIGN_IN_WITH_X);
    if (h) sent.push(h);
    return fetch(request);
  };
}

/** The bearer token announced in an `Authentication-Info` header. */
function announcedToken(headers: Headers): string {
  const info = headers.get('authentication-info') ?? '';
  const m = /access_token="(acg_[A-Za-z0-9_-]{43})", token_type="Bearer", expires_in=(\d+)/.exec(info);
  expect(m, info).not.toBeNull();
  expect(Number(m![2])).toBe(24 * 3600);
  return m![1];
}

beforeAll(async () => {
  t = await startTestGateway();
  payer = t.stack.payment.buyers[0];
  other = t.stack.payment.buyers[1];
  const required = await challenge(`${t.url}/api/v1/execute`, walletBalancesRequest(payer.address));
  const paid = await post(`${t.url}/api/v1/execute`, walletBalancesRequest(payer.address), {
    'PAYMENT-SIGNATURE': paymentHeader(await officialPayload(payer, required)),
  });
  expect(paid.status, JSON.stringify(paid.body)).toBe(200);
  executionId = paid.body.execution_id;
});
afterAll(async () => {
  await t?.close();
});

describe('sign-in-with-x on every 402', () => {
  it('POST /api/v1/execute, POST /api/v1/jobs and POST /v1/account/deposit advertise a fresh challenge for this origin and the payment chain', async () => {
    const host = new URL(t.url).host;
    const execute = siwxOf(await post(`${t.url}/api/v1/execute`, walletBalancesRequest(payer.address)));
    const again = siwxOf(await post(`${t.url}/api/v1/execute`, walletBalancesRequest(payer.address)));
    const jobs = siwxOf(await post(`${t.url}/api/v1/jobs`, gatewayJobs.example.request));
    const deposit = siwxOf(await post(`${t.url}/v1/account/deposit`, { amount_usdc: '1' }));
    for (const [ext, path] of [
      [execute, '/api/v1/execute'],
      [jobs, '/api/v1/jobs'],
      [deposit, '/v1/account/deposit'],
    ] as const) {
      expect(ext.info).toMatchObject({ domain: host, uri: `${t.url}${path}`, version: '1', resources: [`${t.url}${path}`] });
      expect(ext.info.nonce).toMatch(/^[0-9a-f]{32}$/);
      // 5 minutes: @x402/extensions reads the clock once for issuedAt and again for expirationTime,
      // so the two may be a millisecond or so further apart (seen: 300001)
      const lifetimeMs = Date.parse(ext.info.expirationTime!) - Date.parse(ext.info.issuedAt);
      expect(lifetimeMs).toBeGreaterThanOrEqual(300_000);
      expect(lifetimeMs).toBeLessThan(301_000);
      expect(ext.supportedChains).toEqual([{ chainId: 'eip155:8453', type: 'eip191' }]);
    }
    // a nonce is for one 402, even while the rest of the 402 is reused
    expect(again.info.nonce).not.toBe(execute.info.nonce);
  });

  it("an MCP tool's PaymentRequired carries one too (resource: the /mcp endpoint)", async () => {
    const client = new Client({ name: 'siwx-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      const r = await client.callTool({ name: 'intelligence_wallet_balances', arguments: { address: payer.address, chain: 'base' } });
      expect(r.isError).toBe(true);
      const ext = (r.structuredContent as { extensions: Record<string, SIWxExtension> }).extensions[SIGN_IN_WITH_X];
      expect(ext.info).toMatchObject({ domain: new URL(t.url).host, uri: `${t.url}/mcp` });
      expect(ext.supportedChains).toEqual([{ chainId: 'eip155:8453', type: 'eip191' }]);
    } finally {
      await client.close();
    }
  });
});

describe('reading what one paid for, the x402 way', () => {
  it('GET /api/v1/executions/{id} without credentials is a 402 carrying a sign-in-with-x challenge for that URL', async () => {
    const url = `${t.url}/api/v1/executions/${executionId}`;
    const res = await getJson(url);
    const ext = siwxOf(res);
    expect(ext.info.uri).toBe(url);
    const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
    expect(required.accepts[0]).toMatchObject({ network: 'eip155:8453', amount: '0' });
    expect(JSON.stringify(res.body)).not.toContain(payer.address.slice(2).toLowerCase());
  });

  it("the official wrapFetchWithSIWx gets the payer in by itself, and the proof's bearer token works like Sign-In with Ethereum's", async () => {
    const sent: string[] = [];
    const res = await wrapFetchWithSIWx(recording(sent), payer)(`${t.url}/api/v1/executions/${executionId}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ execution_id: executionId, status: 'SUCCEEDED', payer: payer.address });
    expect(sent).toHaveLength(1);
    const token = announcedToken(res.headers);
    // the session: its executions, its metered account and its wallet-monitor subscriptions
    const again = await getJson(`${t.url}/api/v1/executions/${executionId}`, { authorization: `Bearer ${token}` });
    expect(again.status).toBe(200);
    const account = await getJson(`${t.url}/v1/account`, { authorization: `Bearer ${token}` });
    expect(account.status).toBe(200);
    expect(account.body.address.toLowerCase()).toBe(payer.address.toLowerCase());
  });

  it('another wallet signs in too but gets 404, as for an unknown execution, and nothing of the record', async () => {
    const res = await wrapFetchWithSIWx(fetch, other)(`${t.url}/api/v1/executions/${executionId}`);
    expect(res.status).toBe(404);
    const text = await res.text();
    expect(text).not.toContain('SUCCEEDED');
    expect(text.toLowerCase()).not.toContain(payer.address.slice(2).toLowerCase());
    const unknown = await wrapFetchWithSIWx(fetch, other)(`${t.url}/api/v1/executions/exe_01JZZZZZZZZZZZZZZZZZZZZZZZ`);
    expect(unknown.status).toBe(404);
  });

  it('a replayed SIGN-IN-WITH-X is refused (401 nonce_used) and gets no token', async () => {
    const sent: string[] = [];
    const url = `${t.url}/api/v1/executions/${executionId}`;
    expect((await wrapFetchWithSIWx(recording(sent), payer)(url)).status).toBe(200);
    const replayed = await getJson(url, { [SIGN_IN_WITH_X]: sent[0] });
    expect(replayed.status).toBe(401);
    expect(replayed.body).toMatchObject({ status: 401, reason: 'nonce_used' });
    expect(replayed.headers.get('authentication-info')).toBeNull();
    // two requests racing with one proof: one is signed in
    const first = await getJson(url);
    const ext = siwxOf(first);
    const proof = encodeSIWxHeader(await createSIWxPayload({ ...ext.info, chainId: 'eip155:8453', type: 'eip191' }, payer, url));
    const raced = await Promise.all([getJson(url, { [SIGN_IN_WITH_X]: proof }), getJson(url, { [SIGN_IN_WITH_X]: proof })]);
    expect(raced.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it('a proof for another domain, another chain, too old, or badly signed is refused with its reason', async () => {
    const url = `${t.url}/api/v1/executions/${executionId}`;
    const fresh = async () => siwxOf(await getJson(url)).info;
    const sign = async (info: SIWxExtension['info'], chainId = 'eip155:8453', requestUrl = url) =>
      encodeSIWxHeader(await createSIWxPayload({ ...info, chainId, type: 'eip191' }, payer, requestUrl));
    const refused = async (h: string) => getJson(url, { [SIGN_IN_WITH_X]: h });

    const evil = await fresh();
    const wrongDomain = await refused(await sign({ ...evil, domain: 'evil.example', uri: 'https://evil.example/x' }, 'eip155:8453', 'https://evil.example/x'));
    expect(wrongDomain.body).toMatchObject({ status: 401, reason: 'wrong_domain' });

    const wrongChain = await refused(await sign(await fresh(), 'eip155:1'));
    expect(wrongChain.body).toMatchObject({ status: 401, reason: 'wrong_chain' });

    const old = await fresh();
    const issuedAt = new Date(Date.now() - 10 * 60_000).toISOString();
    const tooOld = await refused(await sign({ ...old, issuedAt, expirationTime: new Date(Date.now() + 60_000).toISOString() }));
    expect(tooOld.body).toMatchObject({ status: 401, reason: 'expired' });

    const info = await fresh();
    const forged = JSON.parse(Buffer.from(await sign(info), 'base64').toString());
    forged.address = other.address;
    const badSignature = await refused(Buffer.from(JSON.stringify(forged)).toString('base64'));
    expect(badSignature.body).toMatchObject({ status: 401, reason: 'bad_signature' });

    expect((await refused('not base64 json')).body).toMatchObject({ status: 401, reason: 'invalid_message' });
  });

  it('a payment sent with SIGN-IN-WITH-X answers with the session token: no second round trip', async () => {
    const first = await post(`${t.url}/api/v1/execute`, walletBalancesRequest(payer.address));
    const ext = siwxOf(first);
    const required = decodePaymentRequiredHeader(first.headers.get('payment-required')!);
    const proof = encodeSIWxHeader(await createSIWxPayload({ ...ext.info, chainId: 'eip155:8453', type: 'eip191' }, payer, `${t.url}/api/v1/execute`));
    const paid = await post(`${t.url}/api/v1/execute`, walletBalancesRequest(payer.address), {
      'PAYMENT-SIGNATURE': paymentHeader(await officialPayload(payer, required)),
      [SIGN_IN_WITH_X]: proof,
    });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    const token = announcedToken(paid.headers);
    const read = await getJson(`${t.url}/api/v1/executions/${paid.body.execution_id}`, { authorization: `Bearer ${token}` });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ execution_id: paid.body.execution_id, payer: payer.address });
  });
});
