import { createProvider, defineProviderCapability, onboard, type RunningProvider } from '@acg/provider-kit';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestGateway } from '../useTestGateway.js';
import { bearerToken, paidPost, usdcReader } from '../x402.js';

/**
 * Attack (issue 36, item 7): the provider kit's `onboard()` against the real gateway, twice, as a
 * provider process does across a restart. The gateway's 409 for an address that already has a
 * provider carries both the generic `code: "CONFLICT"` and the specific `reason:
 * "provider_exists"`; `problemCode` read `code` first, so the second onboard threw
 * ProviderOnboardingError 409 instead of taking its documented PUT path. After the fix the second
 * onboard updates the same provider and rotates its secret, and a paid call reaches the restarted
 * process (signed with the new secret, which it alone knows): the payer pays the price once and the
 * treasury receives it. This file failed before the fix (checked).
 */

// provider endpoints on a loopback host over http are accepted in development (as the other provider tests run)
const t = useTestGateway({ config: { walletMonitor: { webhookPolicy: 'development' } } });
const owner = privateKeyToAccount(generatePrivateKey());
const echo = defineProviderCapability({
  name: 'kit_echo',
  description: 'Answers the number it was sent.',
  price_usdc: '0.003',
  input: z.object({ n: z.int() }),
  output: z.object({ n: z.int() }),
  example_request: { n: 1 },
  run: async ({ n }) => ({ n }),
});
const running: RunningProvider[] = [];
afterAll(async () => {
  for (const r of running) await r.close();
});

/** A fresh provider process: a new `createProvider` (no secret yet) listening on its own port. */
async function startProcess() {
  const provider = createProvider({ capabilities: [echo], account: owner });
  const r = await provider.listen(0, '127.0.0.1');
  running.push(r);
  return { provider, running: r };
}

describe('provider kit onboard() against the real gateway', () => {
  it('registers, then after a restart updates the same provider (409 provider_exists → PUT), and the restarted process is paid', async () => {
    const first = await startProcess();
    const registered = await onboard({ gatewayUrl: t.url, account: owner, endpoint: first.running.url, name: 'Kit Echo', provider: first.provider });
    expect(registered).toMatchObject({ created: true, address: owner.address });

    // the process restarts: a new port, a provider without the secret, onboarding again on start
    await first.running.close();
    const second = await startProcess();
    const updated = await onboard({ gatewayUrl: t.url, account: owner, endpoint: second.running.url, name: 'Kit Echo 2', provider: second.provider });
    expect(updated).toMatchObject({ created: false, provider_id: registered.provider_id, name: 'Kit Echo 2', endpoint: second.running.url });
    expect(updated.signing_secret).not.toBe(registered.signing_secret);

    const ownerToken = await bearerToken(t.url, owner);
    const listed = await (await fetch(`${t.url}/api/v1/providers/${registered.provider_id}`, { headers: { authorization: `Bearer ${ownerToken}` } })).json();
    expect(listed).toMatchObject({ provider_id: registered.provider_id, name: 'Kit Echo 2' });

    const usdc = usdcReader(t.stack.payment.rpcUrl, t.stack.payment.usdc);
    const buyer = t.stack.payment.buyers[0];
    const before = { payer: await usdc(buyer.address), treasury: await usdc(t.stack.payment.treasury.address) };
    const paid = await paidPost(buyer, `${t.url}/api/v1/execute`, { capability_id: 'intelligence.kit_echo', input: { n: 42 } });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body).toMatchObject({ status: 'SUCCEEDED', result: { n: 42 }, provider: { provider_id: registered.provider_id } });
    expect(await usdc(buyer.address)).toBe(before.payer - 3000n);
    expect(await usdc(t.stack.payment.treasury.address)).toBe(before.treasury + 3000n);
  });
});
