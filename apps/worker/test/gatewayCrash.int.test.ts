import type { ChildProcess } from 'node:child_process';
import { standaloneEnv, startEntry } from './entries.js';
import { freePort, startDevStack, type DevStack } from '@acg/devnet';
import { AUTHORIZATION_STATE_ABI } from '@acg/treasury';
import { encodePaymentSignatureHeader, decodePaymentRequiredHeader } from '@x402/core/http';
import { x402Client } from '@x402/core/client';
import { appendPaymentIdentifierToExtensions, generatePaymentId } from '@x402/extensions/payment-identifier';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { createPublicClient, erc20Abi, http, parseAbiItem } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// kill -9 of a standalone gateway while a paid request is in flight, then a replay of the same
// payment on a fresh gateway: the stored result or a refund, never a second charge.
let stack: DevStack;
const children: ChildProcess[] = [];
let env: Record<string, string>;

function run(entry: string, extra: Record<string, string>, ready: RegExp): Promise<ChildProcess> {
  return startEntry(children, entry, { ...env, ...extra }, ready);
}

async function startGatewayProcess(): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = await run('../../gateway/src/main.ts', { GATEWAY_PORT: String(port) }, /gateway http/);
  return { child, url: `http://127.0.0.1:${port}` };
}

beforeAll(async () => {
  stack = await startDevStack({ quiet: true, preferPrivateRedis: true });
  env = {
    ...standaloneEnv(stack),
    // a reservation without progress for 1.5 s counts as orphaned (production: 10 minutes)
    PAYMENT_RECOVERY_INTERVAL_MS: '500',
    PAYMENT_RECOVERY_AFTER_MS: '1500',
  };
  await run('../src/main.ts', {}, /worker up/);
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r(null) : c.once('exit', r)))));
  await stack?.stop();
});

describe('a standalone gateway killed mid-request', () => {
  it('a replay on a new gateway gets the stored result or a refund, and the payer is charged exactly once', { timeout: 120_000 }, async () => {
    const buyer = stack.payment.buyers[3];
    const chain = createPublicClient({ transport: http(stack.payment.rpcUrl) });
    const balanceOf = () => chain.readContract({ address: stack.payment.usdc, abi: erc20Abi, functionName: 'balanceOf', args: [buyer.address] });
    const before = await balanceOf();
    const startBlock = await chain.getBlockNumber();

    const a = await startGatewayProcess();
    const body = JSON.stringify({ capability_id: 'intelligence.wallet_balances', input: { address: buyer.address, chain: 'base' } });
    const post = (url: string, headers: Record<string, string> = {}) =>
      fetch(`${url}/api/v1/execute`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const challenge = await post(a.url);
    expect(challenge.status).toBe(402);
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: buyer as never });
    const required = decodePaymentRequiredHeader(challenge.headers.get('payment-required')!);
    // the payer's resends prove it with an x402 payment-identifier (a settled authorization is public)
    appendPaymentIdentifierToExtensions(required.extensions!, generatePaymentId());
    const payload = await client.createPaymentPayload(required);
    const nonce = (payload.payload as { authorization: { nonce: `0x${string}` } }).authorization.nonce;
    const header = encodePaymentSignatureHeader(payload);

    // send, and SIGKILL the gateway as soon as the settlement is on chain
    const inFlight = post(a.url, { 'PAYMENT-SIGNATURE': header }).then(
      (r) => r.status,
      () => 'connection lost' as const,
    );
    const used = () =>
      chain.readContract({ address: stack.payment.usdc, abi: AUTHORIZATION_STATE_ABI, functionName: 'authorizationState', args: [buyer.address, nonce] });
    for (let i = 0; i < 2000 && !(await used()); i++) await new Promise((r) => setTimeout(r, 5));
    expect(await used()).toBe(true);
    a.child.kill('SIGKILL');
    await new Promise((r) => (a.child.exitCode !== null || a.child.signalCode !== null ? r(null) : a.child.once('exit', r)));
    expect(['connection lost', 200]).toContain(await inFlight);

    // a new gateway; the worker's sweep recovers the orphan; replay the same payment until it has a final answer
    const b = await startGatewayProcess();
    let final: { status: number; body: Record<string, unknown> } | undefined;
    for (let i = 0; i < 200 && !final; i++) {
      const r = await post(b.url, { 'PAYMENT-SIGNATURE': header });
      const json = (await r.json()) as Record<string, unknown>;
      if (r.status === 200 || r.status === 502) final = { status: r.status, body: json };
      else {
        expect([409, 503]).toContain(r.status); // in progress / being recovered
        await new Promise((res) => setTimeout(res, 250));
      }
    }
    expect(final).toBeDefined();
    if (final!.status === 200) {
      expect(final!.body).toMatchObject({ status: 'SUCCEEDED', execution_id: expect.stringMatching(/^exe_/) });
      expect(await balanceOf()).toBe(before - 1000n);
    } else {
      expect(final!.body).toMatchObject({ execution_id: expect.stringMatching(/^exe_/), refund: { amount: '1000' } });
      // the refund is mined and the replay says so
      let replay: Record<string, unknown> = final!.body;
      for (let i = 0; i < 200 && (replay.refund as { status: string }).status !== 'sent'; i++) {
        await new Promise((res) => setTimeout(res, 100));
        replay = (await post(b.url, { 'PAYMENT-SIGNATURE': header }).then((r) => r.json())) as Record<string, unknown>;
      }
      expect(replay).toMatchObject({ execution_id: final!.body.execution_id, refund: { status: 'sent', tx_hash: expect.stringMatching(/^0x/) } });
      expect(await balanceOf()).toBe(before);
    }
    // exactly one USDC transfer from the payer: the payment, never a second charge
    const transfers = await chain.getLogs({
      address: stack.payment.usdc,
      event: parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)'),
      args: { from: buyer.address },
      fromBlock: startBlock,
    });
    expect(transfers).toHaveLength(1);
    // a further replay is stable
    const again = await post(b.url, { 'PAYMENT-SIGNATURE': header });
    expect(again.status).toBe(final!.status);
  });
});
