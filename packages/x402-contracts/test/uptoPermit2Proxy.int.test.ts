// Our x402UptoPermit2Proxy (contracts/x402UptoPermit2Proxy.sol) on a real anvil payment chain with Permit2 and
// Circle USDC (@acg/devnet's setupPaymentChain places it at 0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002):
// each rule of the x402 `upto` EVM scheme, the attacks on it, and the official @x402/evm `upto` client and
// facilitator, unchanged, signing, verifying and settling against it. Balances are read on chain.
import { permit2Abi, usdcAbi, usdcBalance } from '@acg/devnet';
import { x402Client } from '@x402/core/client';
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { toClientEvmSigner, toFacilitatorEvmSigner, uptoPermit2WitnessTypes } from '@x402/evm';
import { UptoEvmScheme as UptoEvmClientScheme } from '@x402/evm/upto/client';
import { UptoEvmScheme as UptoEvmFacilitatorScheme } from '@x402/evm/upto/facilitator';
import { publicActions, type Abi, type Address, type Hex, type LocalAccount } from 'viem';
import { describe, expect, it } from 'vitest';
import {
  installUptoPermit2Proxy,
  PERMIT2_ADDRESS,
  uptoPermit2ProxyRuntimeCode,
  X402_UPTO_PERMIT2_PROXY_ADDRESS,
  x402UptoPermit2ProxyAbi,
} from '../src/index.js';
import * as chain from './chain.js';

const env = chain.usePaymentChain();
const PROXY = X402_UPTO_PERMIT2_PROXY_ADDRESS;
/** The proxy's errors and Permit2's, so a revert from either decodes by name. */
const ERRORS_ABI = [...x402UptoPermit2ProxyAbi, ...permit2Abi.filter((i) => i.type === 'error')] as Abi;

const publicClient = () => chain.publicClientOf(env.pay);
const walletOf = (account: LocalAccount) => chain.walletOf(env.pay, account);
const chainNow = () => chain.chainNow(env.pay);
const approvePermit2 = (buyer: LocalAccount) => chain.approvePermit2(env.pay, buyer);
const onSnapshot = (body: () => Promise<void>) => chain.onSnapshot(env.pay, body);
const allowanceToPermit2 = (owner: Address) =>
  publicClient().readContract({ address: env.pay.usdc, abi: usdcAbi, functionName: 'allowance', args: [owner, PERMIT2_ADDRESS] });

type Signed = {
  permit: { permitted: { token: Address; amount: bigint }; nonce: bigint; deadline: bigint };
  witness: { to: Address; facilitator: Address; validAfter: bigint };
  owner: Address;
  signature: Hex;
};

let nonceSeq = 1_000n;
/** A Permit2 `PermitWitnessTransferFrom` for the proxy, signed by `buyer` with @x402/evm's `upto` witness types. */
async function signUpto(
  buyer: LocalAccount,
  o: { ceiling: bigint; to: Address; facilitator?: Address; validAfter?: bigint; deadline?: bigint },
): Promise<Signed> {
  const now = await chainNow();
  const permit = { permitted: { token: env.pay.usdc, amount: o.ceiling }, nonce: nonceSeq++, deadline: o.deadline ?? now + 600n };
  const witness = { to: o.to, facilitator: o.facilitator ?? env.pay.facilitator.address, validAfter: o.validAfter ?? now - 60n };
  const signature = await buyer.signTypedData({
    domain: { name: 'Permit2', chainId: env.pay.chainId, verifyingContract: PERMIT2_ADDRESS },
    types: uptoPermit2WitnessTypes,
    primaryType: 'PermitWitnessTransferFrom',
    message: { ...permit, spender: PROXY, witness },
  });
  return { permit, witness, owner: buyer.address, signature };
}

/** `settle(permit, amount, owner, witness, signature)` sent by `caller`; resolves with the receipt status or the decoded revert error's name. */
async function settle(s: Signed, amount: bigint, caller: LocalAccount = env.pay.facilitator): Promise<string> {
  return send(caller, 'settle', [s.permit, amount, s.owner, s.witness, s.signature]);
}

function send(caller: LocalAccount, functionName: 'settle' | 'settleWithPermit', args: readonly unknown[]): Promise<string> {
  return chain.call(env.pay, caller, PROXY, ERRORS_ABI, functionName, args);
}

describe('x402UptoPermit2Proxy on the dev payment chain', () => {
  it('is placed at the canonical address, bound to canonical Permit2, and placing it again writes nothing', async () => {
    expect(env.pay.uptoPermit2Proxy).toBe(PROXY);
    expect(await publicClient().getCode({ address: PROXY })).toBe(uptoPermit2ProxyRuntimeCode());
    expect(await publicClient().readContract({ address: PROXY, abi: x402UptoPermit2ProxyAbi, functionName: 'PERMIT2' })).toBe(PERMIT2_ADDRESS);
    expect(await publicClient().readContract({ address: PROXY, abi: x402UptoPermit2ProxyAbi, functionName: 'WITNESS_TYPE_STRING' })).toBe(
      'Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)',
    );
    expect(await installUptoPermit2Proxy(env.pay.rpcUrl)).toEqual({ address: PROXY, written: false });
  });

  it('settles what was used, at most the ceiling, only to witness.to, and never twice', async () => {
    const buyer = env.pay.buyers[0];
    const payTo = env.pay.treasury.address;
    await approvePermit2(buyer);
    const s = await signUpto(buyer, { ceiling: 100_000n, to: payTo });
    const buyerBefore = await usdcBalance(env.pay.rpcUrl, buyer.address);
    const payToBefore = await usdcBalance(env.pay.rpcUrl, payTo);

    expect(await settle(s, 100_001n)).toBe('AmountExceedsPermitted');
    // Funds redirected: the witness is signed, so Permit2 recovers another signer.
    expect(await settle({ ...s, witness: { ...s.witness, to: env.pay.buyers[7].address } }, 1n)).toBe('InvalidSigner');
    // A raised ceiling is not what was signed either.
    expect(await settle({ ...s, permit: { ...s.permit, permitted: { ...s.permit.permitted, amount: 200_000n } } }, 150_000n)).toBe('InvalidSigner');
    expect(await settle({ ...s, owner: '0x0000000000000000000000000000000000000000' }, 1n)).toBe('InvalidOwner');
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(buyerBefore);

    expect(await settle(s, 42_000n)).toBe('success');
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(buyerBefore - 42_000n);
    expect(await usdcBalance(env.pay.rpcUrl, payTo)).toBe(payToBefore + 42_000n);

    // Replay of the same permit, for the rest of the ceiling: the Permit2 nonce is spent.
    expect(await settle(s, 58_000n)).toBe('InvalidNonce');
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(buyerBefore - 42_000n);
  });

  it('is settled only by witness.facilitator', async () => {
    const buyer = env.pay.buyers[1];
    const attacker = env.pay.buyers[7];
    await approvePermit2(buyer);
    const s = await signUpto(buyer, { ceiling: 50_000n, to: env.pay.treasury.address });
    const before = await usdcBalance(env.pay.rpcUrl, buyer.address);
    expect(await settle(s, 50_000n, attacker)).toBe('UnauthorizedFacilitator');
    // Naming itself in the witness does not help: the signature covers the facilitator.
    expect(await settle({ ...s, witness: { ...s.witness, facilitator: attacker.address } }, 50_000n, attacker)).toBe('InvalidSigner');
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(before);
    // The nonce is still unused: the named facilitator settles.
    expect(await settle(s, 50_000n)).toBe('success');
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(before - 50_000n);
  });

  it('refuses a payment before validAfter and after the deadline', async () => {
    const buyer = env.pay.buyers[2];
    await approvePermit2(buyer);
    const now = await chainNow();
    const early = await signUpto(buyer, { ceiling: 10_000n, to: env.pay.treasury.address, validAfter: now + 3_600n, deadline: now + 7_200n });
    const before = await usdcBalance(env.pay.rpcUrl, buyer.address);
    expect(await settle(early, 10_000n)).toBe('PaymentTooEarly');
    await onSnapshot(async () => {
      await chain.warpTo(env.pay, now + 3_601n);
      expect(await settle(early, 10_000n)).toBe('success');
      expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(before - 10_000n);
    });

    const expiring = await signUpto(buyer, { ceiling: 10_000n, to: env.pay.treasury.address, deadline: now + 300n });
    await onSnapshot(async () => {
      await chain.warpTo(env.pay, now + 301n);
      expect(await settle(expiring, 10_000n)).toBe('SignatureExpired');
    });
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(before);
  });

  it('settleWithPermit applies the buyer EIP-2612 permit for Permit2, then settles once', async () => {
    const buyer = env.pay.buyers[3]; // has never approved Permit2
    expect(await allowanceToPermit2(buyer.address)).toBe(0n);
    const s = await signUpto(buyer, { ceiling: 30_000n, to: env.pay.treasury.address });
    const deadline = s.permit.deadline;
    const sign2612 = (value: bigint) => chain.signPermitToPermit2(env.pay, buyer, value, deadline);
    const args = (p: Awaited<ReturnType<typeof sign2612>>, amount: bigint) => [p, s.permit, amount, s.owner, s.witness, s.signature] as const;
    const before = await usdcBalance(env.pay.rpcUrl, buyer.address);

    // An EIP-2612 allowance below the signed ceiling is refused before anything moves.
    expect(await send(env.pay.facilitator, 'settleWithPermit', args(await sign2612(29_999n), 20_000n))).toBe('Permit2612AmountMismatch');
    const permit2612 = await sign2612(30_000n);
    expect(await send(env.pay.facilitator, 'settleWithPermit', args(permit2612, 20_000n))).toBe('success');
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(before - 20_000n);
    // Permit2 got the 30,000 allowance from the EIP-2612 permit and spent 20,000 of it.
    expect(await allowanceToPermit2(buyer.address)).toBe(10_000n);
    // Replayed (the EIP-2612 permit is used up, which does not block; the Permit2 nonce does).
    expect(await send(env.pay.facilitator, 'settleWithPermit', args(permit2612, 10_000n))).toBe('InvalidNonce');
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(before - 20_000n);
  });
});

describe('the official @x402/evm upto client and facilitator, unchanged, against our proxy', () => {
  it('signs, verifies and settles below the ceiling; a zero settlement moves nothing; a replay is refused', async () => {
    const wallet = walletOf(env.pay.facilitator).extend(publicActions);
    // viem 2.57's verifyTypedData accepts a wider union than @x402/evm 2.27's signer type declares: cast.
    type SignerInput = Parameters<typeof toFacilitatorEvmSigner>[0];
    const signer = toFacilitatorEvmSigner({ ...wallet, address: env.pay.facilitator.address } as unknown as SignerInput);
    const facilitator = new x402Facilitator().register(env.pay.network, new UptoEvmFacilitatorScheme(signer));
    const buyer = env.pay.buyers[4];
    await approvePermit2(buyer);
    const client = new x402Client().register('eip155:*', new UptoEvmClientScheme(toClientEvmSigner(buyer)));
    const requirements: PaymentRequirements = {
      scheme: 'upto',
      network: env.pay.network,
      asset: env.pay.usdc,
      amount: '100000', // ceiling 0.1 USDC
      payTo: env.pay.treasury.address,
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2', facilitatorAddress: env.pay.facilitator.address },
    };
    const challenge: PaymentRequired = {
      x402Version: 2,
      resource: { url: 'http://127.0.0.1/api/v1/execute', description: 'test', mimeType: 'application/json' },
      accepts: [requirements],
    };
    const pay1: PaymentPayload = await client.createPaymentPayload(challenge);
    const buyerBefore = await usdcBalance(env.pay.rpcUrl, buyer.address);
    const treasuryBefore = await usdcBalance(env.pay.rpcUrl, env.pay.treasury.address);

    // verify simulates settle() for the full ceiling against our contract.
    expect(await facilitator.verify(pay1, requirements)).toMatchObject({ isValid: true, payer: buyer.address });
    const settled = await facilitator.settle(pay1, { ...requirements, amount: '42000' });
    expect(settled).toMatchObject({ success: true, network: env.pay.network, payer: buyer.address, amount: '42000' });
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const receipt = await publicClient().getTransactionReceipt({ hash: settled.transaction as Hex });
    expect(receipt.to?.toLowerCase()).toBe(PROXY.toLowerCase());
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(buyerBefore - 42_000n);
    expect(await usdcBalance(env.pay.rpcUrl, env.pay.treasury.address)).toBe(treasuryBefore + 42_000n);

    // The same payload again: the chain refuses (spent Permit2 nonce), nothing more moves.
    const replay = await facilitator.settle(pay1, { ...requirements, amount: '42000' });
    expect(replay.success).toBe(false);
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(buyerBefore - 42_000n);

    // A call that used nothing settles nothing, with no transaction.
    const pay2 = await client.createPaymentPayload(challenge);
    expect(await facilitator.verify(pay2, requirements)).toMatchObject({ isValid: true });
    expect(await facilitator.settle(pay2, { ...requirements, amount: '0' })).toMatchObject({ success: true, transaction: '', amount: '0' });
    // More than the ceiling is refused.
    const over = await facilitator.settle(pay2, { ...requirements, amount: '100001' });
    expect(over.success).toBe(false);
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(buyerBefore - 42_000n);
    expect(await usdcBalance(env.pay.rpcUrl, env.pay.treasury.address)).toBe(treasuryBefore + 42_000n);
  });
});
