import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { createSIWxPayload, encodeSIWxHeader, SIGN_IN_WITH_X, type SIWxExtension, type SIWxPayload } from '@x402/extensions/sign-in-with-x';
import { serializeErc6492Signature, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../useTestGateway.js';
import { officialPayload, paymentHeader, post, walletBalancesRequest, challenge } from '../x402.js';

/**
 * Attack (issue 36 items 4 and 5): sign-in-with-x as a way to make the gateway work for nothing,
 * and to sign in where a proof was not meant for. A proof must answer a challenge the gateway
 * issued, for the resource it was issued for; the signature is checked locally first, and a
 * contract wallet's on-chain check (ERC-1271 / ERC-6492 `eth_call`) runs only for an issued nonce,
 * gas capped and rate limited per address. The payment chain is reached through a JSON-RPC proxy
 * in front of anvil that counts the `eth_call`s naming the attacker's factory.
 */
let rpc: Server;
/** The params of every `eth_call` the gateway sent, as JSON text. */
const ethCalls: string[] = [];

async function countingProxy(anvilUrl: string): Promise<string> {
  rpc = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const parsed = JSON.parse(body) as { method: string; params: unknown } | { method: string; params: unknown }[];
      for (const call of Array.isArray(parsed) ? parsed : [parsed]) if (call.method === 'eth_call') ethCalls.push(JSON.stringify(call.params));
      const upstream = await fetch(anvilUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.writeHead(upstream.status, { 'content-type': 'application/json' });
      res.end(await upstream.text());
    });
  });
  await new Promise<void>((resolve) => rpc.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(rpc.address() as AddressInfo).port}`;
}

const t = useTestGateway({ paymentRpcUrl: countingProxy });
let payer: LocalAccount;
let executionId: string;
let executionUrl: string;

beforeAll(async () => {
  payer = t.stack.payment.buyers[0];
  const required = await challenge(t.executeUrl, walletBalancesRequest(payer.address));
  const paid = await post(t.executeUrl, walletBalancesRequest(payer.address), { 'PAYMENT-SIGNATURE': paymentHeader(await officialPayload(payer, required)) });
  expect(paid.status, JSON.stringify(paid.body)).toBe(200);
  executionId = paid.body.execution_id;
  executionUrl = `${t.url}/api/v1/executions/${executionId}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => (rpc ? rpc.close(() => resolve()) : resolve()));
});

/** The sign-in-with-x challenge of a 402's `PAYMENT-REQUIRED` header. */
function challengeOf(res: { status: number; headers: Headers }): SIWxExtension['info'] {
  expect(res.status).toBe(402);
  const ext = decodePaymentRequiredHeader(res.headers.get('payment-required')!).extensions?.[SIGN_IN_WITH_X] as SIWxExtension | undefined;
  expect(ext).toBeDefined();
  return ext!.info;
}

/** A fresh challenge the gateway issues for `url` (the 402 of an unauthenticated read). */
async function issued(url = executionUrl): Promise<SIWxExtension['info']> {
  return challengeOf(await fetch(url));
}

/** `info` signed by `signer` as a proof for `requestUrl`. */
async function signed(info: SIWxExtension['info'], signer: LocalAccount, requestUrl = info.uri): Promise<SIWxPayload> {
  return createSIWxPayload({ ...info, chainId: 'eip155:8453', type: 'eip191' }, signer, requestUrl);
}

async function get(url: string, proof: SIWxPayload) {
  const res = await fetch(url, { headers: { [SIGN_IN_WITH_X]: encodeSIWxHeader(proof) } });
  return { status: res.status, info: res.headers.get('authentication-info'), body: (await res.json()) as Record<string, unknown> };
}

/** An ERC-6492 signature naming `factory` (an arbitrary contract the gateway would deploy in its eth_call) for a counterfactual `address`. */
function erc6492Proof(base: SIWxPayload, factory: `0x${string}`, address: `0x${string}`): SIWxPayload {
  const signature = serializeErc6492Signature({ address: factory, data: '0xdeadbeef', signature: `0x${'11'.repeat(65)}` });
  return { ...base, address, signature };
}

const callsNaming = (factory: string) => ethCalls.filter((p) => p.toLowerCase().includes(factory.slice(2).toLowerCase())).length;

describe('item 4: no on-chain work for a proof the gateway did not ask for', () => {
  it('an ERC-6492 proof naming an arbitrary factory with a self-chosen nonce makes no eth_call and is refused', async () => {
    const factory = privateKeyToAccount(generatePrivateKey()).address;
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    const info = { ...(await issued()), nonce: randomBytes(16).toString('hex') };
    const res = await get(executionUrl, erc6492Proof(await signed(info, payer), factory, wallet));
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ status: 401, reason: 'unknown_nonce' });
    expect(res.info).toBeNull();
    expect(callsNaming(factory)).toBe(0);
  });

  it('for an issued nonce the contract wallet check runs once, gas capped, and is refused; a plain EOA proof needs no eth_call', async () => {
    const factory = privateKeyToAccount(generatePrivateKey()).address;
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    const res = await get(executionUrl, erc6492Proof(await signed(await issued(), payer), factory, wallet));
    expect(res.body).toMatchObject({ status: 401, reason: 'bad_signature' });
    const calls = ethCalls.filter((p) => p.toLowerCase().includes(factory.slice(2).toLowerCase()));
    expect(calls).toHaveLength(1);
    const gas = BigInt((JSON.parse(calls[0]) as [{ gas?: string }])[0].gas ?? '0x0');
    expect(gas > 0n && gas <= 1_000_000n, String(gas)).toBe(true);

    const before = ethCalls.length;
    const ok = await get(executionUrl, await signed(await issued(), payer));
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ethCalls.slice(before).filter((p) => p.toLowerCase().includes(payer.address.slice(2).toLowerCase()))).toHaveLength(0);
  });

  it('contract wallet checks are rate limited per address: the sixth in a minute is refused without an eth_call', async () => {
    const factory = privateKeyToAccount(generatePrivateKey()).address;
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    const answers: unknown[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await get(executionUrl, erc6492Proof(await signed(await issued(), payer), factory, wallet));
      answers.push(`${r.status} ${r.body.reason}`);
    }
    expect(answers).toEqual([...Array(5).fill('401 bad_signature'), '429 rate_limited']);
    expect(callsNaming(factory)).toBe(5);
  });
});

describe('item 5: a proof signs in only with an issued nonce, on the resource it was issued for', () => {
  it('a self-chosen nonce, correctly signed, is refused (unknown_nonce) and gets no token', async () => {
    const info = { ...(await issued()), nonce: randomBytes(16).toString('hex') };
    const res = await get(executionUrl, await signed(info, payer));
    expect(res).toMatchObject({ status: 401, info: null, body: { reason: 'unknown_nonce' } });
  });

  it('a proof made for an execution record does not sign in on GET /v1/account; on its own resource it still does', async () => {
    const proof = await signed(await issued(), payer);
    const account = await get(`${t.url}/v1/account`, proof);
    expect(account).toMatchObject({ status: 401, info: null, body: { reason: 'wrong_resource' } });
    expect(account.body).not.toHaveProperty('balance');
    // the refusal did not use the nonce up: the proof is still good where it was meant for
    const own = await get(executionUrl, proof);
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.info).toContain('access_token="acg_');
  });

  it('re-signing an issued challenge for another resource is refused (wrong_resource)', async () => {
    const info = await issued();
    const moved = await signed({ ...info, uri: `${t.url}/v1/account`, resources: [`${t.url}/v1/account`] }, payer, `${t.url}/v1/account`);
    expect(await get(`${t.url}/v1/account`, moved)).toMatchObject({ status: 401, info: null, body: { reason: 'wrong_resource' } });
    // nor does a challenge of the paid execute route sign in on a read of a record
    const executeInfo = challengeOf(await post(t.executeUrl, walletBalancesRequest(payer.address)));
    expect(await get(executionUrl, await signed(executeInfo, payer))).toMatchObject({ status: 401, body: { reason: 'wrong_resource' } });
  });

  it('single use stays: the second request with one proof is refused (nonce_used)', async () => {
    const proof = await signed(await issued(), payer);
    expect((await get(executionUrl, proof)).status).toBe(200);
    expect(await get(executionUrl, proof)).toMatchObject({ status: 401, info: null, body: { reason: 'nonce_used' } });
  });
});
