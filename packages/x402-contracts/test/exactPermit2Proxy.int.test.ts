// Our x402ExactPermit2Proxy (contracts/x402ExactPermit2Proxy.sol) on a real anvil payment chain with Permit2 and
// Circle USDC (@acg/devnet's setupPaymentChain places it at 0x402085c248EeA27D92E8b30b2C58ed07f9E20001): each
// rule of the x402 `exact` EVM scheme's Permit2 method, the attacks on it, and the official @x402/evm `exact`
// client and facilitator, unchanged, paying through it (assetTransferMethod `permit2`, with and without the
// EIP-2612 extension). Balances are read on chain.
import { permit2Abi, usdcAbi, usdcBalance } from '@acg/devnet';
import { x402Client } from '@x402/core/client';
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { permit2WitnessTypes, toClientEvmSigner, toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmFacilitatorScheme } from '@x402/evm/exact/facilitator';
import { publicActions, toFunctionSelector, zeroAddress, type Abi, type Address, type Hex, type LocalAccount } from 'viem';
import { describe, expect, it } from 'vitest';
import {
  exactPermit2ProxyRuntimeCode,
  installExactPermit2Proxy,
  PERMIT2_ADDRESS,
  X402_EXACT_PERMIT2_PROXY_ADDRESS,
  x402ExactPermit2ProxyAbi,
} from '../src/index.js';
import * as chain from './chain.js';

const env = chain.usePaymentChain();
const PROXY = X402_EXACT_PERMIT2_PROXY_ADDRESS;
/** The proxy's errors and Permit2's, so a revert from either decodes by name. */
const ERRORS_ABI = [...x402ExactPermit2ProxyAbi, ...permit2Abi.filter((i) => i.type === 'error')] as Abi;

const publicClient = () => chain.publicClientOf(env.pay);
const balance = (a: Address) => usdcBalance(env.pay.rpcUrl, a);
const allowanceToPermit2 = (owner: Address) =>
  publicClient().readContract({ address: env.pay.usdc, abi: usdcAbi, functionName: 'allowance', args: [owner, PERMIT2_ADDRESS] });

type Signed = {
  permit: { permitted: { token: Address; amount: bigint }; nonce: bigint; deadline: bigint };
  witness: { to: Address; validAfter: bigint };
  owner: Address;
  signature: Hex;
};

let nonceSeq = 2_000n;
/** A Permit2 `PermitWitnessTransferFrom` for the proxy, signed by `buyer` with @x402/evm's `exact` witness types. */
async function signExact(buyer: LocalAccount, o: { amount: bigint; to: Address; validAfter?: bigint; deadline?: bigint }): Promise<Signed> {
  const now = await chain.chainNow(env.pay);
  const permit = { permitted: { token: env.pay.usdc, amount: o.amount }, nonce: nonceSeq++, deadline: o.deadline ?? now + 600n };
  const witness = { to: o.to, validAfter: o.validAfter ?? 0n };
  const signature = await buyer.signTypedData({
    domain: { name: 'Permit2', chainId: env.pay.chainId, verifyingContract: PERMIT2_ADDRESS },
    types: permit2WitnessTypes,
    primaryType: 'PermitWitnessTransferFrom',
    message: { ...permit, spender: PROXY, witness },
  });
  return { permit, witness, owner: buyer.address, signature };
}

/** `settle(permit, owner, witness, signature)` sent by `caller` (anyone may submit); the receipt status or the decoded revert error's name. */
function settle(s: Signed, caller: LocalAccount = env.pay.facilitator): Promise<string> {
  return chain.call(env.pay, caller, PROXY, ERRORS_ABI, 'settle', [s.permit, s.owner, s.witness, s.signature]);
}

/** The buyer's EIP-2612 permit giving Permit2 an allowance of `value` USDC, as `settleWithPermit` takes it. */
const sign2612 = (buyer: LocalAccount, value: bigint, deadline: bigint) => chain.signPermitToPermit2(env.pay, buyer, value, deadline);

describe('x402ExactPermit2Proxy on the dev payment chain', () => {
  it('is placed at the canonical address, bound to canonical Permit2, with the exact witness type; placing it again writes nothing', async () => {
    expect(env.pay.exactPermit2Proxy).toBe(PROXY);
    expect(await publicClient().getCode({ address: PROXY })).toBe(exactPermit2ProxyRuntimeCode());
    expect(await publicClient().readContract({ address: PROXY, abi: x402ExactPermit2ProxyAbi, functionName: 'PERMIT2' })).toBe(PERMIT2_ADDRESS);
    expect(await publicClient().readContract({ address: PROXY, abi: x402ExactPermit2ProxyAbi, functionName: 'WITNESS_TYPE_STRING' })).toBe(
      'Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,uint256 validAfter)',
    );
    expect(await installExactPermit2Proxy(env.pay.rpcUrl)).toEqual({ address: PROXY, written: false });
  });

  it('moves exactly the permitted amount, only to witness.to, once; whoever submits it', async () => {
    const buyer = env.pay.buyers[0];
    const payTo = env.pay.treasury.address;
    const stranger = env.pay.buyers[7];
    await chain.approvePermit2(env.pay, buyer);
    const s = await signExact(buyer, { amount: 25_000n, to: payTo });
    const buyerBefore = await balance(buyer.address);
    const payToBefore = await balance(payTo);

    // Funds redirected to the submitter: the witness is signed, so Permit2 recovers another signer.
    expect(await settle({ ...s, witness: { ...s.witness, to: stranger.address } }, stranger)).toBe('InvalidSigner');
    // More than was permitted: the amount is part of the signed permit.
    expect(await settle({ ...s, permit: { ...s.permit, permitted: { ...s.permit.permitted, amount: 25_001n } } })).toBe('InvalidSigner');
    // Another owner's funds with this signature.
    expect(await settle({ ...s, owner: env.pay.buyers[6].address })).toBe('InvalidSigner');
    expect(await settle({ ...s, owner: zeroAddress })).toBe('InvalidOwner');
    expect(await settle({ ...s, witness: { ...s.witness, to: zeroAddress } })).toBe('InvalidDestination');
    expect(await balance(buyer.address)).toBe(buyerBefore);

    // A stranger may relay it: the money still goes to witness.to, all of it.
    expect(await settle(s, stranger)).toBe('success');
    expect(await balance(buyer.address)).toBe(buyerBefore - 25_000n);
    expect(await balance(payTo)).toBe(payToBefore + 25_000n);
    // Replayed: the Permit2 nonce is spent.
    expect(await settle(s)).toBe('InvalidNonce');
    expect(await balance(buyer.address)).toBe(buyerBefore - 25_000n);
  });

  it('refuses a zero amount, a payment before validAfter and one after the deadline', async () => {
    const buyer = env.pay.buyers[1];
    await chain.approvePermit2(env.pay, buyer);
    const payTo = env.pay.treasury.address;
    const now = await chain.chainNow(env.pay);
    const before = await balance(buyer.address);
    expect(await settle(await signExact(buyer, { amount: 0n, to: payTo }))).toBe('InvalidAmount');

    const early = await signExact(buyer, { amount: 10_000n, to: payTo, validAfter: now + 3_600n, deadline: now + 7_200n });
    expect(await settle(early)).toBe('PaymentTooEarly');
    await chain.onSnapshot(env.pay, async () => {
      await chain.warpTo(env.pay, now + 3_600n);
      expect(await settle(early)).toBe('success');
      expect(await balance(buyer.address)).toBe(before - 10_000n);
    });

    const expiring = await signExact(buyer, { amount: 10_000n, to: payTo, deadline: now + 300n });
    await chain.onSnapshot(env.pay, async () => {
      await chain.warpTo(env.pay, now + 301n);
      expect(await settle(expiring)).toBe('SignatureExpired');
    });
    expect(await balance(buyer.address)).toBe(before);
  });

  it('settleWithPermit applies the buyer EIP-2612 permit for Permit2 first, then settles once', async () => {
    const buyer = env.pay.buyers[2]; // has never approved Permit2
    expect(await allowanceToPermit2(buyer.address)).toBe(0n);
    const s = await signExact(buyer, { amount: 30_000n, to: env.pay.treasury.address });
    const args = (p: Awaited<ReturnType<typeof sign2612>>) => [p, s.permit, s.owner, s.witness, s.signature] as const;
    const send = (p: Awaited<ReturnType<typeof sign2612>>) => chain.call(env.pay, env.pay.facilitator, PROXY, ERRORS_ABI, 'settleWithPermit', args(p));
    const before = await balance(buyer.address);
    // Without any allowance the plain settle fails in the token.
    expect(await settle(s)).toMatch(/^Error: |TRANSFER_FROM_FAILED/);
    expect(await send(await sign2612(buyer, 29_999n, s.permit.deadline))).toBe('Permit2612AmountMismatch');
    const permit2612 = await sign2612(buyer, 30_000n, s.permit.deadline);
    expect(await send(permit2612)).toBe('success');
    expect(await balance(buyer.address)).toBe(before - 30_000n);
    expect(await allowanceToPermit2(buyer.address)).toBe(0n);
    // Replayed: the used EIP-2612 permit does not block, the spent Permit2 nonce does.
    expect(await send(permit2612)).toBe('InvalidNonce');
    expect(await balance(buyer.address)).toBe(before - 30_000n);
  });
});

describe('the official @x402/evm exact client and facilitator (assetTransferMethod permit2), unchanged, against our proxy', () => {
  const requirementsFor = (amount: string): PaymentRequirements => ({
    scheme: 'exact',
    network: env.pay.network,
    asset: env.pay.usdc,
    amount,
    payTo: env.pay.treasury.address,
    maxTimeoutSeconds: 300,
    extra: { assetTransferMethod: 'permit2', name: 'USD Coin', version: '2' },
  });
  const challengeFor = (requirements: PaymentRequirements, extensions?: Record<string, unknown>): PaymentRequired => ({
    x402Version: 2,
    resource: { url: 'http://127.0.0.1/api/v1/execute', description: 'test', mimeType: 'application/json' },
    accepts: [requirements],
    ...(extensions ? { extensions } : {}),
  });
  const facilitator = () => {
    const wallet = chain.walletOf(env.pay, env.pay.facilitator).extend(publicActions);
    // viem 2.57's verifyTypedData accepts a wider union than @x402/evm 2.27's signer type declares: cast.
    type SignerInput = Parameters<typeof toFacilitatorEvmSigner>[0];
    const signer = toFacilitatorEvmSigner({ ...wallet, address: env.pay.facilitator.address } as unknown as SignerInput);
    return new x402Facilitator().register(env.pay.network, new ExactEvmFacilitatorScheme(signer));
  };

  it('a buyer who approved Permit2 pays exactly the price to payTo through the proxy; the replay is refused', async () => {
    const buyer = env.pay.buyers[3];
    await chain.approvePermit2(env.pay, buyer);
    const client = new x402Client().register('eip155:*', new ExactEvmClientScheme(toClientEvmSigner(buyer)));
    const requirements = requirementsFor('15000'); // 0.015 USDC
    const payment: PaymentPayload = await client.createPaymentPayload(challengeFor(requirements));
    const auth = (payment.payload as { permit2Authorization: { spender: Address; witness: { to: Address } } }).permit2Authorization;
    expect(auth.spender).toBe(PROXY);
    expect(auth.witness.to).toBe(env.pay.treasury.address);
    const buyerBefore = await balance(buyer.address);
    const treasuryBefore = await balance(env.pay.treasury.address);

    const fac = facilitator();
    // verify simulates settle() against our contract.
    expect(await fac.verify(payment, requirements)).toMatchObject({ isValid: true, payer: buyer.address });
    const settled = await fac.settle(payment, requirements);
    expect(settled).toMatchObject({ success: true, network: env.pay.network, payer: buyer.address });
    const receipt = await publicClient().getTransactionReceipt({ hash: settled.transaction as Hex });
    expect(receipt.to?.toLowerCase()).toBe(PROXY.toLowerCase());
    expect(await balance(buyer.address)).toBe(buyerBefore - 15_000n);
    expect(await balance(env.pay.treasury.address)).toBe(treasuryBefore + 15_000n);

    // The same payment again, through a fresh facilitator (no memory of it): the chain refuses, nothing moves.
    expect((await facilitator().verify(payment, requirements)).isValid).toBe(false);
    expect((await facilitator().settle(payment, requirements)).success).toBe(false);
    expect(await balance(buyer.address)).toBe(buyerBefore - 15_000n);
    expect(await balance(env.pay.treasury.address)).toBe(treasuryBefore + 15_000n);
  });

  it('a buyer with no Permit2 allowance pays through the eip2612GasSponsoring extension (settleWithPermit)', async () => {
    const buyer = env.pay.buyers[4]; // has never approved Permit2
    expect(await allowanceToPermit2(buyer.address)).toBe(0n);
    const client = new x402Client().register('eip155:*', new ExactEvmClientScheme(toClientEvmSigner(buyer, publicClient())));
    const requirements = requirementsFor('20000');
    const payment = await client.createPaymentPayload(challengeFor(requirements, { eip2612GasSponsoring: {} }));
    expect(payment.extensions?.eip2612GasSponsoring).toBeDefined();
    const buyerBefore = await balance(buyer.address);
    const treasuryBefore = await balance(env.pay.treasury.address);

    const fac = facilitator();
    expect(await fac.verify(payment, requirements)).toMatchObject({ isValid: true, payer: buyer.address });
    const settled = await fac.settle(payment, requirements);
    expect(settled).toMatchObject({ success: true, payer: buyer.address });
    const tx = await publicClient().getTransaction({ hash: settled.transaction as Hex });
    expect(tx.to?.toLowerCase()).toBe(PROXY.toLowerCase());
    const settleWithPermit = x402ExactPermit2ProxyAbi.find((i) => i.type === 'function' && i.name === 'settleWithPermit');
    expect(tx.input.slice(0, 10)).toBe(toFunctionSelector(settleWithPermit!));
    expect(await balance(buyer.address)).toBe(buyerBefore - 20_000n);
    expect(await balance(env.pay.treasury.address)).toBe(treasuryBefore + 20_000n);
  });
});
