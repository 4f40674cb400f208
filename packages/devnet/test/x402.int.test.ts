// The x402 path end to end on the dev chain, with the official @x402 packages the gateway uses
// (docs/decisions.md "x402 payments"): a buyer's exact-scheme payment is verified and settled by an in-process
// facilitator, and a replay is refused with nonce_already_used (which needs Multicall3, see Known pitfalls).
import { x402Client } from '@x402/core/client';
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { toClientEvmSigner, toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmFacilitatorScheme } from '@x402/evm/exact/facilitator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, http, publicActions } from 'viem';
import { nonceManager, privateKeyToAccount } from 'viem/accounts';
import { devPrivateKey, DEV_ROLES } from '../src/accounts.js';
import { startAnvil, type AnvilInstance } from '../src/anvil.js';
import { setupPaymentChain, type PaymentChainInfo } from '../src/paymentChain.js';
import { usdcBalance } from '../src/usdc.js';

let anvil: AnvilInstance;
let pay: PaymentChainInfo;
beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 });
  pay = await setupPaymentChain(anvil.rpcUrl);
});
afterAll(async () => {
  await anvil?.stop();
});

describe('x402 exact scheme on the dev payment chain', () => {
  it('verifies and settles a buyer payment, and refuses its replay', async () => {
    const account = privateKeyToAccount(devPrivateKey(DEV_ROLES.facilitator), { nonceManager });
    const wallet = createWalletClient({ account, chain: pay.chain, transport: http(pay.rpcUrl) }).extend(publicActions);
    // viem 2.57's verifyTypedData accepts a wider union than @x402/evm 2.27's signer type declares: cast.
    type SignerInput = Parameters<typeof toFacilitatorEvmSigner>[0];
    const signer = toFacilitatorEvmSigner({ ...wallet, address: account.address } as unknown as SignerInput);
    const facilitator = new x402Facilitator().register(pay.network, new ExactEvmFacilitatorScheme(signer));
    const buyer = pay.buyers[2];
    const client = new x402Client().register('eip155:*', new ExactEvmClientScheme(toClientEvmSigner(buyer)));

    const requirements: PaymentRequirements = {
      scheme: 'exact',
      network: pay.network,
      asset: pay.usdc,
      amount: '10000', // 0.01 USDC
      payTo: pay.treasury.address,
      maxTimeoutSeconds: 60,
      extra: { name: 'USD Coin', version: '2' },
    };
    const challenge: PaymentRequired = {
      x402Version: 2,
      resource: { url: 'http://127.0.0.1/api/v1/execute', description: 'test', mimeType: 'application/json' },
      accepts: [requirements],
    };
    const payload = await client.createPaymentPayload(challenge);
    const before = await usdcBalance(pay.rpcUrl, buyer.address);

    const verified = await facilitator.verify(payload, requirements);
    expect(verified).toMatchObject({ isValid: true, payer: buyer.address });
    const settled = await facilitator.settle(payload, requirements);
    expect(settled).toMatchObject({ success: true, network: 'eip155:8453', payer: buyer.address });
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);

    expect(await usdcBalance(pay.rpcUrl, buyer.address)).toBe(before - 10_000n);
    expect(await usdcBalance(pay.rpcUrl, pay.treasury.address)).toBe(10_000n);

    const replay = await facilitator.verify(payload, requirements);
    expect(replay.isValid).toBe(false);
    expect(replay.invalidReason).toMatch(/nonce_already_used/);
  });
});
