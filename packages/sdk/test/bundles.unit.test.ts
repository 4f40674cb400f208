import { createWalletClient, custom, keccak256, parseTransaction, recoverTransactionAddress, type Hex, type TransactionSerialized } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { PLAN_CHAIN_IDS, signPlanTransactions } from '../src/bundles.js';
import { AcgError } from '../src/errors.js';
import type { LiquidationPlan } from '../src/types.js';

// Signing a liquidation plan (docs/liquidation-plans.md "Sending the plan"); the loop through the
// builder is apps/gateway/test/liquidationLoop.int.test.ts.
const searcher = privateKeyToAccount(`0x${'ab'.repeat(32)}`);
const plan: LiquidationPlan = {
  chain: 'ethereum',
  protocol: 'aave_v3',
  borrower: '0x486f27d2B5E3d8b5FD9C0a9b6c3D7a4e8f1b2C3D',
  searcher: searcher.address,
  market: '0x87870Bca3F3fD6335C3F4ce8392D69350B4fA4E2',
  based_on_block: 100,
  target_block: 101,
  transactions: [
    { from: searcher.address, to: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', data: '0x095ea7b3', value: '0', gas: '70000', purpose: 'approve' },
    { from: searcher.address, to: '0x87870Bca3F3fD6335C3F4ce8392D69350B4fA4E2', data: '0x00a718a9', value: '0', gas: '450000', purpose: 'liquidationCall' },
  ],
  repay: { token: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', symbol: 'USDC', amount: '1000', usd: 0.001 },
  tokens_in: [],
  tokens_out: [],
  gas_used: '400000',
  base_fee_per_gas: '3000000000',
  gas_cost_usd: 2.4,
  profit_usd: 10,
  simulation: { method: 'eth_simulateV1', block: 101 },
};

describe('signPlanTransactions', () => {
  it('signs each planned transaction in order, EIP-1559, consecutive nonces, the plan chain, fee cap 2 × base fee + tip', async () => {
    const txs = await signPlanTransactions(plan, searcher, { nonce: 7 });
    expect(txs).toHaveLength(2);
    for (const [i, raw] of txs.entries()) {
      const tx = parseTransaction(raw as TransactionSerialized);
      expect(tx).toMatchObject({
        type: 'eip1559',
        chainId: PLAN_CHAIN_IDS.ethereum,
        nonce: 7 + i,
        to: plan.transactions[i].to.toLowerCase(),
        data: plan.transactions[i].data,
        gas: BigInt(plan.transactions[i].gas),
        maxPriorityFeePerGas: 1_000_000_000n,
        maxFeePerGas: 7_000_000_000n,
      });
      expect(await recoverTransactionAddress({ serializedTransaction: raw as TransactionSerialized })).toBe(searcher.address);
    }
    const tipped = await signPlanTransactions(plan, searcher, { nonce: 0, maxPriorityFeePerGas: 5n, maxFeePerGas: 10n, chainId: 31337 });
    expect(parseTransaction(tipped[0] as TransactionSerialized)).toMatchObject({ chainId: 31337, maxPriorityFeePerGas: 5n, maxFeePerGas: 10n });
  });

  it('refuses a signer that is not the plan searcher, and a local account without a nonce or an RPC URL', async () => {
    const other = privateKeyToAccount(`0x${'cd'.repeat(32)}`);
    await expect(signPlanTransactions(plan, other, { nonce: 0 })).rejects.toThrow(AcgError);
    await expect(signPlanTransactions(plan, other, { nonce: 0 })).rejects.toThrow(/plan is for the searcher/);
    await expect(signPlanTransactions(plan, searcher)).rejects.toThrow(/needs the nonce/);
  });

  it('signs with a wallet client, reading the pending nonce through its transport', async () => {
    const asked: unknown[] = [];
    const wallet = createWalletClient({
      account: searcher,
      transport: custom({
        async request({ method, params }: { method: string; params?: unknown }) {
          asked.push([method, params]);
          if (method === 'eth_getTransactionCount') return '0x2a';
          // viem's signTransaction with `chain: null` checks the node's chain id
          if (method === 'eth_chainId') return '0x1';
          throw new Error(`unexpected ${method}`);
        },
      }),
    });
    const txs = await signPlanTransactions(plan, wallet);
    expect(asked[0]).toEqual(['eth_getTransactionCount', [searcher.address, 'pending']]);
    expect(txs.map((raw) => parseTransaction(raw as TransactionSerialized).nonce)).toEqual([42, 43]);
    expect(new Set(txs.map((raw) => keccak256(raw as Hex))).size).toBe(2);
  });
});
