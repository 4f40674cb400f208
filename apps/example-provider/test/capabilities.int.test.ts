/**
 * The example provider's capabilities on real anvil chains (the dev payment chain 8453 with real
 * USDC at the Base address, and the Arbitrum dev chain 42161), called through the kit's endpoint
 * with Standard Webhooks signatures made by `standardwebhooks` as the gateway makes them. Every
 * expected number is read from the chain independently with viem.
 */
import { createProvider, verifyResultSignature, type RunningProvider } from '@acg/provider-kit';
import {
  devAccount,
  devPrivateKey,
  DEV_ROLES,
  setupPaymentChain,
  startAnvil,
  startDevChain,
  type AnvilInstance,
  type DevChain,
  type PaymentChainInfo,
} from '@acg/devnet';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { createPublicClient, encodeFunctionData, erc20Abi, http, parseEther, type Address, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleCapabilities } from '../src/index.js';

/** The offers' JSON Schemas compiled with strict Ajv 2020-12, as the gateway checks them (registration, and every answer against output_schema). */
const outputValidators = new Map<string, ValidateFunction>();

const providerAccount = privateKeyToAccount(devPrivateKey(DEV_ROLES.provider));
const secret = `whsec_${randomBytes(24).toString('base64')}`;
const buyer = devAccount(2).address;
const other = devAccount(3).address;

let anvil: AnvilInstance;
let arbitrum: DevChain;
let pay: PaymentChainInfo;
let running: RunningProvider;
let base: PublicClient;
let arb: PublicClient;
let seq = 0;

/** POSTs a signed provider call; `probe` sends it as the gateway's prober does. */
async function call(capability_id: string, input: unknown, probe = false): Promise<{ status: number; json: any }> {
  const execution_id = probe ? `probe_01JTESTPROBE${String(++seq).padStart(14, '0')}` : `exe_test_${++seq}`;
  const body = JSON.stringify({ capability_id, execution_id, input });
  const at = new Date();
  const response = await fetch(running.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': execution_id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(execution_id, at, body),
      ...(probe ? { 'x-acg-probe': '1' } : {}),
    },
    body,
  });
  const json: any = await response.json();
  if (response.status === 200) {
    const validate = outputValidators.get(capability_id)!;
    expect(validate(json.result), JSON.stringify(validate.errors)).toBe(true);
    expect(await verifyResultSignature({ address: providerAccount.address, executionId: execution_id, result: json.result, signature: json.signature })).toBe(
      true,
    );
  }
  return { status: response.status, json };
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 });
  [pay, arbitrum] = await Promise.all([setupPaymentChain(anvil.rpcUrl), startDevChain('arbitrum')]);
  base = createPublicClient({ chain: pay.chain, transport: http(anvil.rpcUrl) }) as PublicClient;
  arb = createPublicClient({ transport: http(arbitrum.rpcUrl) }) as PublicClient;
  const provider = createProvider({
    capabilities: exampleCapabilities({ base: anvil.rpcUrl, arbitrum: arbitrum.rpcUrl }),
    account: providerAccount,
    signingSecret: secret,
  });
  running = await provider.listen(0);
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  for (const offer of provider.offers()) {
    const validInput = ajv.compile(offer.input_schema);
    expect(validInput(offer.example_request), JSON.stringify(validInput.errors)).toBe(true);
    outputValidators.set(`${offer.product}.${offer.name}`, ajv.compile(offer.output_schema));
  }
});

afterAll(async () => {
  await running?.close();
  await arbitrum?.stop();
  await anvil?.stop();
});

describe('mev.simulate_transaction', () => {
  it('simulates a USDC transfer: balance changes of both parties and the decoded Transfer log, nothing sent', async () => {
    const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [other, 5_000_000n] });
    const before = await base.readContract({ address: pay.usdc, abi: erc20Abi, functionName: 'balanceOf', args: [buyer] });
    const { status, json } = await call('mev.simulate_transaction', { chain: 'base', from: buyer.toLowerCase(), to: pay.usdc, data });
    expect(status).toBe(200);
    const r = json.result;
    expect(r).toMatchObject({ chain: 'base', chain_id: 8453, success: true, error: null });
    expect(BigInt(r.gas_used)).toBeGreaterThan(21_000n);
    expect(r.return_data).toBe(`0x${'0'.repeat(63)}1`); // transfer() returned true
    expect(r.balance_changes).toEqual(
      expect.arrayContaining([
        { address: buyer, asset: pay.usdc, symbol: 'USDC', decimals: 6, before: before.toString(), after: (before - 5_000_000n).toString(), delta: '-5000000' },
        expect.objectContaining({ address: other, asset: pay.usdc, symbol: 'USDC', delta: '5000000' }),
      ]),
    );
    expect(r.balance_changes.filter((c: { asset: string }) => c.asset === pay.usdc)).toHaveLength(2);
    expect(r.logs).toEqual([
      expect.objectContaining({ index: 0, address: pay.usdc, event: 'Transfer', standard: 'erc20', args: { from: buyer, to: other, value: '5000000' } }),
    ]);
    expect(r.native_transfers).toEqual([]);
    // a simulation: the chain did not move
    expect(await base.readContract({ address: pay.usdc, abi: erc20Abi, functionName: 'balanceOf', args: [buyer] })).toBe(before);
  });

  it('simulates a plain ETH transfer: native deltas and the traced native transfer', async () => {
    const { status, json } = await call('mev.simulate_transaction', { chain: 'arbitrum', from: buyer, to: other, value: parseEther('1.5').toString() });
    expect(status).toBe(200);
    const r = json.result;
    expect(r).toMatchObject({ chain: 'arbitrum', chain_id: 42161, success: true, logs: [] });
    expect(r.native_transfers).toEqual([{ from: buyer, to: other, value: '1500000000000000000' }]);
    const [buyerEth, otherEth] = await Promise.all([arb.getBalance({ address: buyer }), arb.getBalance({ address: other })]);
    expect(r.balance_changes).toEqual(
      expect.arrayContaining([
        {
          address: buyer,
          asset: 'native',
          symbol: 'ETH',
          decimals: 18,
          before: buyerEth.toString(),
          after: (buyerEth - parseEther('1.5')).toString(),
          delta: '-1500000000000000000',
        },
        {
          address: other,
          asset: 'native',
          symbol: 'ETH',
          decimals: 18,
          before: otherEth.toString(),
          after: (otherEth + parseEther('1.5')).toString(),
          delta: '1500000000000000000',
        },
      ]),
    );
  });

  it('reports a revert (transfer above the balance) as success: false with its reason and no changes', async () => {
    const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [other, 10n ** 18n] });
    const { status, json } = await call('mev.simulate_transaction', { chain: 'base', from: buyer, to: pay.usdc, data });
    expect(status).toBe(200);
    expect(json.result).toMatchObject({ success: false, balance_changes: [], logs: [] });
    expect(json.result.error).toBe('reverted: ERC20: transfer amount exceeds balance');
  });

  it('refuses a chain it does not serve (400, the input schema lists the served chains)', async () => {
    const { status, json } = await call('mev.simulate_transaction', { chain: 'ethereum', from: buyer, to: other });
    expect(status).toBe(400);
    expect(json.errors[0].path).toEqual(['input', 'chain']);
  });
});

describe('intelligence.token_metadata', () => {
  it('reads USDC on the payment chain (FiatTokenV2_2 at the Base address)', async () => {
    const supply = await base.readContract({ address: pay.usdc, abi: erc20Abi, functionName: 'totalSupply' });
    const { status, json } = await call('intelligence.token_metadata', { chain: 'base', token: pay.usdc.toLowerCase() });
    expect(status).toBe(200);
    expect(json.result).toMatchObject({
      chain: 'base',
      chain_id: 8453,
      token: pay.usdc,
      name: 'USD Coin',
      symbol: 'USDC',
      decimals: 6,
      total_supply: supply.toString(),
    });
    expect(supply).toBeGreaterThanOrEqual(8n * 10_000_000_000n); // eight funded buyers
    expect(json.result.total_supply_formatted).toBe(
      (supply / 1_000_000n).toString() + (supply % 1_000_000n ? `.${(supply % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '')}` : ''),
    );
  });

  it('answers 422 not_a_contract for a wallet and 422 not_erc20 for a contract that is not a token (Multicall3)', async () => {
    const wallet = await call('intelligence.token_metadata', { chain: 'base', token: buyer });
    expect(wallet).toMatchObject({ status: 422, json: { code: 'not_a_contract' } });
    const multicall = await call('intelligence.token_metadata', { chain: 'arbitrum', token: '0xcA11bde05977b3631167028862bE2a173976CA11' });
    expect(multicall).toMatchObject({ status: 422, json: { code: 'not_erc20' } });
  });
});

describe('intelligence.wallet_report', () => {
  it('finds two dev addresses and both chains in an objective and reports native and USDC balances read from each chain', async () => {
    const objective = `Compare what ${buyer} and ${other.toLowerCase()} hold on Base and Arbitrum (and ${buyer} again).`;
    const { status, json } = await call('intelligence.wallet_report', { objective });
    expect(status).toBe(200);
    const r = json.result;
    expect(r).toMatchObject({ objective, addresses: [buyer, other], ignored_addresses: [], chains: ['base', 'arbitrum'], unavailable_chains: [] });
    expect(r.balances).toHaveLength(4);
    for (const [chain, client, usdc] of [
      ['base', base, pay.usdc],
      ['arbitrum', arb, arbitrum.usdc],
    ] as const) {
      for (const address of [buyer, other] as Address[]) {
        const row = r.balances.find((b: { chain: string; address: string }) => b.chain === chain && b.address === address);
        const [eth, usd] = await Promise.all([
          client.getBalance({ address }),
          client.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [address] }),
        ]);
        expect(row.native).toMatchObject({ symbol: 'ETH', decimals: 18, balance: eth.toString() });
        expect(row.usdc).toEqual({ symbol: 'USDC', decimals: 6, balance: usd.toString(), formatted: (usd / 1_000_000n).toString(), token: usdc });
        expect(usd).toBe(10_000_000_000n);
      }
    }
    expect(r.totals.find((t: { address: string }) => t.address === buyer).usdc_base_units).toBe('20000000000');
    expect(r.summary).toContain(`${buyer} holds`);
  });

  it('reads every served chain when the objective names none, and names the ones it cannot read', async () => {
    const all = await call('intelligence.wallet_report', { objective: 'balances please', addresses: [other] });
    expect(all.json.result).toMatchObject({ addresses: [other], chains: ['base', 'arbitrum'], unavailable_chains: [] });
    const eth = await call('intelligence.wallet_report', { objective: `${other} on ethereum and base` });
    expect(eth.json.result).toMatchObject({ chains: ['base'], unavailable_chains: ['ethereum'] });
  });

  it('answers 422 no_address for an objective without an address', async () => {
    expect(await call('intelligence.wallet_report', { objective: 'How rich is vitalik?' })).toMatchObject({ status: 422, json: { code: 'no_address' } });
  });
});

describe('probes', () => {
  it.each(['mev.simulate_transaction', 'intelligence.token_metadata', 'intelligence.wallet_report'])(
    '%s answers its example_request (what the prober sends)',
    async (id) => {
      const capability = exampleCapabilities({ base: anvil.rpcUrl, arbitrum: arbitrum.rpcUrl }).find((c) => c.id === id)!;
      const { status, json } = await call(id, capability.example_request, true);
      expect(status).toBe(200);
      expect(capability.output.safeParse(json.result).success).toBe(true);
    },
  );
});
