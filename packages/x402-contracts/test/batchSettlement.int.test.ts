// Our x402BatchSettlement, ERC3009DepositCollector and Permit2DepositCollector (contracts/) on a real anvil
// payment chain with Circle USDC and Permit2 (@acg/devnet's setupPaymentChain places them at their canonical
// addresses): every rule of the x402 `batch-settlement` EVM scheme and the attacks on it, and the official
// @x402/evm client and facilitator, unchanged, depositing by ERC-3009 and by Permit2. Balances are read on chain.
import { permit2Abi, TRANSFER_WITH_AUTHORIZATION_TYPES, usdcAbi, usdcBalance } from '@acg/devnet';
import { x402Client } from '@x402/core/client';
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { claimBatchTypes, refundTypes, toClientEvmSigner, toFacilitatorEvmSigner, voucherTypes } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClientScheme, computeChannelId, signVoucher } from '@x402/evm/batch-settlement/client';
import { BatchSettlementEvmScheme as BatchFacilitatorScheme } from '@x402/evm/batch-settlement/facilitator';
import {
  encodeAbiParameters,
  encodeFunctionData,
  hashTypedData,
  keccak256,
  parseEventLogs,
  publicActions,
  type Abi,
  type Address,
  type Hex,
  type LocalAccount,
} from 'viem';
import { describe, expect, it } from 'vitest';
import {
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  erc3009DepositCollectorRuntimeCode,
  PERMIT2_ADDRESS,
  PERMIT2_DEPOSIT_COLLECTOR_ADDRESS,
  permit2DepositCollectorAbi,
  permit2DepositCollectorRuntimeCode,
  X402_BATCH_SETTLEMENT_ADDRESS,
  x402BatchSettlementAbi,
} from '../src/index.js';
import { compileTestFixture } from '../scripts/compile.js';
import * as chain from './chain.js';
import { x402EvmChunkDeclaring } from './x402evmInternals.js';

const env = chain.usePaymentChain();
const BATCH = X402_BATCH_SETTLEMENT_ADDRESS;
const COLLECTOR = ERC3009_DEPOSIT_COLLECTOR_ADDRESS;
/** The contract's ABI with its custom errors (USDC's `require` messages decode without one). */
const ABI = x402BatchSettlementAbi as Abi;

type Config = {
  payer: Address;
  payerAuthorizer: Address;
  receiver: Address;
  receiverAuthorizer: Address;
  token: Address;
  withdrawDelay: number;
  salt: Hex;
};

let saltSeq = 1n;
/** A channel of `buyer` (signing its own vouchers) to the treasury, receiverAuthorizer the facilitator account, 900 s withdrawal delay. */
function channelOf(buyer: LocalAccount, over: Partial<Config> = {}): Config {
  return {
    payer: buyer.address,
    payerAuthorizer: buyer.address,
    receiver: env.pay.treasury.address,
    receiverAuthorizer: env.pay.facilitator.address,
    token: env.pay.usdc,
    withdrawDelay: 900,
    salt: `0x${(saltSeq++).toString(16).padStart(64, '0')}`,
    ...over,
  };
}

const domain = (verifyingContract: Address = BATCH) => ({ name: 'x402 Batch Settlement', version: '1', chainId: env.pay.chainId, verifyingContract });
const read = <T>(functionName: string, args: readonly unknown[]) =>
  chain.publicClientOf(env.pay).readContract({ address: BATCH, abi: ABI, functionName, args }) as Promise<T>;
const channelIdOf = (c: Config) => read<Hex>('getChannelId', [c]);
const channelState = async (c: Config) => {
  const [balance, totalClaimed] = await read<[bigint, bigint]>('channels', [await channelIdOf(c)]);
  return { balance, totalClaimed };
};
const send = (caller: LocalAccount, functionName: string, args: readonly unknown[]) => chain.call(env.pay, caller, BATCH, ABI, functionName, args);

/** `collectorData` for a deposit of `amount` into `c`: the payer's ERC-3009 ReceiveWithAuthorization to the collector, nonce bound to the channel. */
async function depositAuthorization(buyer: LocalAccount, c: Config, amount: bigint, authSalt: bigint = saltSeq++): Promise<Hex> {
  const channelId = await channelIdOf(c);
  const validBefore = (await chain.chainNow(env.pay)) + 3_600n;
  const signature = await buyer.signTypedData({
    domain: chain.usdcDomain(env.pay),
    // EIP-3009 gives receiveWithAuthorization the same fields as transferWithAuthorization, under its own type name.
    types: { ReceiveWithAuthorization: TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization },
    primaryType: 'ReceiveWithAuthorization',
    message: {
      from: buyer.address,
      to: COLLECTOR,
      value: amount,
      validAfter: 0n,
      validBefore,
      nonce: keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'uint256' }], [channelId, authSalt])),
    },
  });
  return encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'bytes' }], [0n, validBefore, authSalt, signature]);
}

/** Deposits `amount` into `c`, relayed by the facilitator (gas sponsoring); returns the call result. */
async function deposit(buyer: LocalAccount, c: Config, amount: bigint, data?: Hex): Promise<string> {
  return send(env.pay.facilitator, 'deposit', [c, amount, COLLECTOR, data ?? (await depositAuthorization(buyer, c, amount))]);
}

/** A claim row: the payer's voucher for cumulative `maxClaimableAmount`, claiming a cumulative `totalClaimed`. */
async function claimRow(signer: LocalAccount, c: Config, maxClaimableAmount: bigint, totalClaimed: bigint) {
  const signature = await signer.signTypedData({
    domain: domain(),
    types: voucherTypes,
    primaryType: 'Voucher',
    message: { channelId: await channelIdOf(c), maxClaimableAmount },
  });
  return { voucher: { channel: c, maxClaimableAmount }, signature, totalClaimed };
}
type Row = Awaited<ReturnType<typeof claimRow>>;

/** The receiverAuthorizer's `ClaimBatch` signature over `rows`. */
async function signClaimBatch(authorizer: LocalAccount, rows: Row[]): Promise<Hex> {
  const claims = await Promise.all(
    rows.map(async (r) => ({
      channelId: await channelIdOf(r.voucher.channel),
      maxClaimableAmount: r.voucher.maxClaimableAmount,
      totalClaimed: r.totalClaimed,
    })),
  );
  return authorizer.signTypedData({ domain: domain(), types: claimBatchTypes, primaryType: 'ClaimBatch', message: { claims } });
}

async function signRefund(authorizer: LocalAccount, c: Config, nonce: bigint, amount: bigint): Promise<Hex> {
  return authorizer.signTypedData({ domain: domain(), types: refundTypes, primaryType: 'Refund', message: { channelId: await channelIdOf(c), nonce, amount } });
}

describe('x402BatchSettlement on the dev payment chain', () => {
  it('is placed with its collector; channel ids are the EIP-712 hash @x402/evm computes, and follow the contract address', async () => {
    const client = chain.publicClientOf(env.pay);
    expect(env.pay.batchSettlement).toBe(BATCH);
    expect(await client.getCode({ address: COLLECTOR })).toBe(erc3009DepositCollectorRuntimeCode());
    const c = channelOf(env.pay.buyers[0]);
    expect(await channelIdOf(c)).toBe(computeChannelId(c, env.pay.network));
    // The same code at another address hashes under that address: the domain is not frozen at build time.
    const elsewhere: Address = '0x00000000000000000000000000000000000b47c4';
    await chain.testClientOf(env.pay).setCode({ address: elsewhere, bytecode: (await client.getCode({ address: BATCH }))! });
    const there = (await client.readContract({ address: elsewhere, abi: ABI, functionName: 'getChannelId', args: [c] })) as Hex;
    expect(there).not.toBe(await channelIdOf(c));
    expect(there).toBe(hashTypedData({ domain: domain(elsewhere), types: { ChannelConfig: channelTypes }, primaryType: 'ChannelConfig', message: c }));
  });

  it('the first deposit creates the channel, later ones top it up; an authorization works once and for its own channel only', async () => {
    const buyer = env.pay.buyers[0];
    const c = channelOf(buyer);
    const before = await usdcBalance(env.pay.rpcUrl, buyer.address);
    const data = await depositAuthorization(buyer, c, 1_000_000n);
    const client = chain.publicClientOf(env.pay);
    const fromBlock = await client.getBlockNumber();
    expect(await deposit(buyer, c, 1_000_000n, data)).toBe('success');
    const logs = parseEventLogs({ abi: x402BatchSettlementAbi, logs: await client.getLogs({ address: BATCH, fromBlock }) });
    expect(logs.map((l) => l.eventName)).toEqual(['ChannelCreated', 'Deposited']);
    expect(await channelState(c)).toEqual({ balance: 1_000_000n, totalClaimed: 0n });
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(before - 1_000_000n);

    // Replayed authorization: USDC refuses the used nonce.
    expect(await deposit(buyer, c, 1_000_000n, data)).toMatch(/^Error: .*authorization is used or canceled/);
    // The same authorization for another channel of the same payer: the nonce binds the channel id, so the signature fails.
    expect(await deposit(buyer, channelOf(buyer), 1_000_000n, data)).toMatch(/^Error: .*invalid signature/);
    // Bad terms are refused before anything is pulled.
    expect(await deposit(buyer, channelOf(buyer, { withdrawDelay: 899 }), 1n)).toBe('InvalidWithdrawDelay');
    expect(await deposit(buyer, channelOf(buyer, { receiverAuthorizer: '0x0000000000000000000000000000000000000000' }), 1n)).toBe('InvalidReceiverAuthorizer');

    expect(await deposit(buyer, c, 500_000n)).toBe('success');
    expect(await channelState(c)).toEqual({ balance: 1_500_000n, totalClaimed: 0n });
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(before - 1_500_000n);
    expect(await usdcBalance(env.pay.rpcUrl, BATCH)).toBeGreaterThanOrEqual(1_500_000n);
  });

  it('claims cumulative vouchers in one batch, never over the voucher or the balance; settle pays the receiver once', async () => {
    const [b1, b2] = [env.pay.buyers[1], env.pay.buyers[2]];
    const [c1, c2] = [channelOf(b1), channelOf(b2)];
    expect(await deposit(b1, c1, 100_000n)).toBe('success');
    expect(await deposit(b2, c2, 100_000n)).toBe('success');
    const fac = env.pay.facilitator;
    const relayer = env.pay.buyers[7]; // anyone may relay a signed batch

    // Over the voucher, over the balance, a forged voucher, another receiver authorizer's batch: all refused.
    const over = [await claimRow(b1, c1, 30_000n, 30_001n)];
    expect(await send(relayer, 'claimWithSignature', [over, await signClaimBatch(fac, over)])).toBe('ClaimExceedsVoucher');
    const overBalance = [await claimRow(b1, c1, 200_000n, 100_001n)];
    expect(await send(relayer, 'claimWithSignature', [overBalance, await signClaimBatch(fac, overBalance)])).toBe('ClaimExceedsBalance');
    const forged = [await claimRow(relayer, c1, 100_000n, 100_000n)];
    expect(await send(relayer, 'claimWithSignature', [forged, await signClaimBatch(fac, forged)])).toBe('InvalidVoucherSignature');
    const rows = [await claimRow(b1, c1, 30_000n, 30_000n), await claimRow(b2, c2, 45_000n, 40_000n)];
    expect(await send(relayer, 'claimWithSignature', [rows, await signClaimBatch(relayer, rows)])).toBe('InvalidAuthorizerSignature');
    expect(await send(relayer, 'claim', [rows])).toBe('UnauthorizedClaimer');
    const mixed = [rows[0], await claimRow(b2, channelOf(b2, { receiverAuthorizer: relayer.address }), 1n, 1n)];
    expect(await send(relayer, 'claimWithSignature', [mixed, await signClaimBatch(fac, mixed)])).toBe('MixedReceiverAuthorizers');
    expect(await channelState(c1)).toEqual({ balance: 100_000n, totalClaimed: 0n });

    expect(await send(relayer, 'claimWithSignature', [rows, await signClaimBatch(fac, rows)])).toBe('success');
    expect(await channelState(c1)).toEqual({ balance: 100_000n, totalClaimed: 30_000n });
    expect(await channelState(c2)).toEqual({ balance: 100_000n, totalClaimed: 40_000n });
    // The same batch again, and an older voucher: no-ops (claims are cumulative).
    expect(await send(relayer, 'claimWithSignature', [rows, await signClaimBatch(fac, rows)])).toBe('success');
    const stale = [await claimRow(b1, c1, 10_000n, 10_000n)];
    expect(await send(fac, 'claim', [stale])).toBe('success');
    expect(await channelState(c1)).toEqual({ balance: 100_000n, totalClaimed: 30_000n });
    // A later voucher raises it (direct claim by the receiverAuthorizer).
    expect(await send(fac, 'claim', [[await claimRow(b1, c1, 55_000n, 55_000n)]])).toBe('success');
    expect(await channelState(c1)).toEqual({ balance: 100_000n, totalClaimed: 55_000n });

    const receiver = env.pay.treasury.address;
    const [claimedBefore, settledBefore] = await read<[bigint, bigint]>('receivers', [receiver, env.pay.usdc]);
    const treasuryBefore = await usdcBalance(env.pay.rpcUrl, receiver);
    const client = chain.publicClientOf(env.pay);
    const fromBlock = await client.getBlockNumber();
    expect(await send(relayer, 'settle', [receiver, env.pay.usdc])).toBe('success');
    const owed = claimedBefore - settledBefore;
    expect(owed).toBeGreaterThanOrEqual(95_000n);
    expect(await usdcBalance(env.pay.rpcUrl, receiver)).toBe(treasuryBefore + owed);
    const [settled] = parseEventLogs({ abi: x402BatchSettlementAbi, eventName: 'Settled', logs: await client.getLogs({ address: BATCH, fromBlock }) });
    expect(settled.args).toEqual({ receiver, token: env.pay.usdc, sender: relayer.address, amount: owed });
    // Settling again moves nothing.
    expect(await send(relayer, 'settle', [receiver, env.pay.usdc])).toBe('success');
    expect(await usdcBalance(env.pay.rpcUrl, receiver)).toBe(treasuryBefore + owed);
  });

  it('refundWithSignature: the nonce advances before the amount is capped; a refund signature works once', async () => {
    const buyer = env.pay.buyers[3];
    const c = channelOf(buyer);
    const id = await channelIdOf(c);
    expect(await deposit(buyer, c, 100_000n)).toBe('success');
    expect(await send(env.pay.facilitator, 'claim', [[await claimRow(buyer, c, 60_000n, 60_000n)]])).toBe('success');
    const relayer = env.pay.buyers[7];
    const before = await usdcBalance(env.pay.rpcUrl, buyer.address);

    const sig0 = await signRefund(env.pay.facilitator, c, 0n, 10_000n);
    expect(await send(relayer, 'refundWithSignature', [c, 10_000n, 0n, await signRefund(relayer, c, 0n, 10_000n)])).toBe('InvalidAuthorizerSignature');
    expect(await send(relayer, 'refundWithSignature', [c, 20_000n, 0n, sig0])).toBe('InvalidAuthorizerSignature'); // amount not what was signed
    expect(await send(relayer, 'refundWithSignature', [c, 10_000n, 0n, sig0])).toBe('success');
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(before + 10_000n);
    expect(await read<bigint>('refundNonce', [id])).toBe(1n);
    expect(await send(relayer, 'refundWithSignature', [c, 10_000n, 0n, sig0])).toBe('InvalidRefundNonce'); // replay

    // More than the unclaimed escrow (30,000 left): capped, never touching claimed funds.
    expect(await send(relayer, 'refundWithSignature', [c, 1_000_000n, 1n, await signRefund(env.pay.facilitator, c, 1n, 1_000_000n)])).toBe('success');
    expect(await channelState(c)).toEqual({ balance: 60_000n, totalClaimed: 60_000n });
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(before + 40_000n);
    // Nothing left to refund: nothing moves, but the nonce still advances.
    expect(await send(relayer, 'refundWithSignature', [c, 5_000n, 2n, await signRefund(env.pay.facilitator, c, 2n, 5_000n)])).toBe('success');
    expect(await read<bigint>('refundNonce', [id])).toBe(3n);
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(before + 40_000n);
    // A direct refund is only for the receiver side.
    expect(await send(relayer, 'refund', [c, 1n])).toBe('UnauthorizedRefunder');
  });

  it('a timed withdrawal: only by the payer or its authorizer, only after withdrawDelay, capped to what is unclaimed then', async () => {
    const buyer = env.pay.buyers[4];
    const authorizer = env.pay.buyers[5];
    const c = channelOf(buyer, { payerAuthorizer: authorizer.address });
    const id = await channelIdOf(c);
    expect(await deposit(buyer, c, 100_000n)).toBe('success');
    const stranger = env.pay.buyers[7];
    expect(await send(stranger, 'initiateWithdraw', [c, 50_000n])).toBe('UnauthorizedWithdrawer');
    expect(await send(buyer, 'initiateWithdraw', [c, 100_001n])).toBe('WithdrawExceedsAvailable');
    expect(await send(authorizer, 'initiateWithdraw', [c, 80_000n])).toBe('success');
    const [amount, initiatedAt] = await read<[bigint, number]>('pendingWithdrawals', [id]);
    expect(amount).toBe(80_000n);
    expect(await send(buyer, 'initiateWithdraw', [c, 1n])).toBe('WithdrawalAlreadyPending');
    expect(await send(buyer, 'finalizeWithdraw', [c])).toBe('WithdrawDelayNotElapsed');

    // During the grace period the receiver side still claims (its vouchers are signed by the payer authorizer).
    expect(await send(env.pay.facilitator, 'claim', [[await claimRow(authorizer, c, 50_000n, 50_000n)]])).toBe('success');
    const before = await usdcBalance(env.pay.rpcUrl, buyer.address);
    await chain.onSnapshot(env.pay, async () => {
      await chain.warpTo(env.pay, BigInt(initiatedAt) + 899n);
      expect(await send(buyer, 'finalizeWithdraw', [c])).toBe('WithdrawDelayNotElapsed');
      expect(await send(stranger, 'finalizeWithdraw', [c])).toBe('UnauthorizedWithdrawer');
      await chain.warpTo(env.pay, BigInt(initiatedAt) + 900n);
      expect(await send(buyer, 'finalizeWithdraw', [c])).toBe('success');
      // 80,000 asked, 50,000 claimed since: the payer gets the 50,000 still unclaimed, the claimed funds stay.
      expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(before + 50_000n);
      expect(await channelState(c)).toEqual({ balance: 50_000n, totalClaimed: 50_000n });
      expect(await read<[bigint, number]>('pendingWithdrawals', [id])).toEqual([0n, 0]);
    });
    // A cooperative refund meanwhile shrinks the pending withdrawal.
    expect(await send(env.pay.facilitator, 'refund', [c, 20_000n])).toBe('success');
    expect((await read<[bigint, number]>('pendingWithdrawals', [id]))[0]).toBe(60_000n);
  });
});

describe('x402BatchSettlement: payer-signed vouchers and multicall', () => {
  it('with no payer authorizer the payer signs vouchers; claim and settle go in one multicall transaction', async () => {
    const buyer = env.pay.buyers[5];
    const receiver: Address = '0x000000000000000000000000000000000000ca11';
    const c = channelOf(buyer, { payerAuthorizer: '0x0000000000000000000000000000000000000000', receiver });
    expect(await deposit(buyer, c, 50_000n)).toBe('success');
    const fac = env.pay.facilitator;
    // Without a payer authorizer, a voucher by anyone but the payer is refused.
    expect(await send(fac, 'claim', [[await claimRow(env.pay.buyers[7], c, 10_000n, 10_000n)]])).toBe('InvalidVoucherSignature');
    const rows = [await claimRow(buyer, c, 12_000n, 12_000n)];
    const batchSig = await signClaimBatch(fac, rows);
    const calls = [
      encodeFunctionData({ abi: x402BatchSettlementAbi, functionName: 'claimWithSignature', args: [rows, batchSig] }),
      encodeFunctionData({ abi: x402BatchSettlementAbi, functionName: 'settle', args: [receiver, env.pay.usdc] }),
    ];
    expect(await send(env.pay.buyers[7], 'multicall', [calls])).toBe('success');
    expect(await channelState(c)).toEqual({ balance: 50_000n, totalClaimed: 12_000n });
    expect(await usdcBalance(env.pay.rpcUrl, receiver)).toBe(12_000n);
    expect(await read<[bigint, bigint]>('receivers', [receiver, env.pay.usdc])).toEqual([12_000n, 12_000n]);
  });
});

describe('x402BatchSettlement against a hostile collector', () => {
  it('refuses re-entry: a collector calling deposit again from inside collect reverts the whole deposit', async () => {
    const attacker = env.pay.buyers[7];
    const fixture = compileTestFixture('ReenteringCollector');
    const client = chain.publicClientOf(env.pay);
    const hash = await chain.walletOf(env.pay, attacker).deployContract({ abi: fixture.abi, bytecode: fixture.bytecode });
    const collector = (await client.waitForTransactionReceipt({ hash })).contractAddress!;
    const c = channelOf(attacker);
    const inner = encodeFunctionData({ abi: x402BatchSettlementAbi, functionName: 'deposit', args: [c, 1n, collector, '0x'] });
    const escrowBefore = await usdcBalance(env.pay.rpcUrl, BATCH);
    expect(await send(attacker, 'deposit', [c, 1n, collector, inner])).toBe('ReentrancyGuardReentrantCall');
    // A collector that delivers nothing is refused too.
    expect(
      await send(attacker, 'deposit', [
        c,
        1n,
        collector,
        encodeFunctionData({ abi: x402BatchSettlementAbi, functionName: 'refundNonce', args: [await channelIdOf(c)] }),
      ]),
    ).toBe('DepositNotReceived');
    expect(await channelState(c)).toEqual({ balance: 0n, totalClaimed: 0n });
    expect(await usdcBalance(env.pay.rpcUrl, BATCH)).toBe(escrowBefore);
  });
});

describe('the official @x402/evm batch-settlement client and facilitator, unchanged, against our contracts', () => {
  it('deposits through the client payload, claims two cumulative vouchers, settles them to the receiver, refunds the rest once', async () => {
    const pay = env.pay;
    const wallet = chain.walletOf(pay, pay.facilitator).extend(publicActions);
    // viem 2.57's verifyTypedData accepts a wider union than @x402/evm 2.27's signer type declares: cast.
    type SignerInput = Parameters<typeof toFacilitatorEvmSigner>[0];
    const signer = toFacilitatorEvmSigner({ ...wallet, address: pay.facilitator.address } as unknown as SignerInput);
    // The facilitator account also signs as receiverAuthorizer (claims and refunds).
    const facilitator = new x402Facilitator().register(pay.network, new BatchFacilitatorScheme(signer, pay.facilitator));
    const buyer = pay.buyers[6];
    const receiver: Address = '0x000000000000000000000000000000000000fee5'; // a receiver of its own: no other test's claims
    const clientSigner = toClientEvmSigner(buyer, chain.publicClientOf(pay));
    const client = new x402Client().register('eip155:*', new BatchClientScheme(clientSigner));
    const requirements: PaymentRequirements = {
      scheme: 'batch-settlement',
      network: pay.network,
      asset: pay.usdc,
      amount: '1000', // 0.001 USDC per call
      payTo: receiver,
      maxTimeoutSeconds: 3600,
      extra: { receiverAuthorizer: pay.facilitator.address, withdrawDelay: 900, name: 'USD Coin', version: '2' },
    };
    const challenge: PaymentRequired = {
      x402Version: 2,
      resource: { url: 'http://127.0.0.1/api/v1/execute', description: 'test', mimeType: 'application/json' },
      accepts: [requirements],
    };
    const buyerBefore = await usdcBalance(pay.rpcUrl, buyer.address);
    const escrowBefore = await usdcBalance(pay.rpcUrl, BATCH);
    const receiverBefore = await usdcBalance(pay.rpcUrl, receiver);

    // 1. First call: the client builds a deposit payload (creates the channel) with its first voucher.
    const first: PaymentPayload = await client.createPaymentPayload(challenge);
    const dp = first.payload as {
      type: string;
      channelConfig: Config;
      voucher: { channelId: Hex; maxClaimableAmount: string; signature: Hex };
      deposit: { amount: string };
    };
    expect(dp.type).toBe('deposit');
    expect(dp.voucher.channelId).toBe(await channelIdOf(dp.channelConfig));
    expect(await facilitator.verify(first, requirements)).toMatchObject({ isValid: true, payer: buyer.address });
    const deposited = await facilitator.settle(first, requirements);
    expect(deposited).toMatchObject({ success: true, network: pay.network });
    const depositAmount = BigInt(dp.deposit.amount);
    expect(await channelState(dp.channelConfig)).toEqual({ balance: depositAmount, totalClaimed: 0n });
    expect(await usdcBalance(pay.rpcUrl, buyer.address)).toBe(buyerBefore - depositAmount);

    // 2. Two more calls' worth: a cumulative voucher for 3 x 0.001, signed by the official client helper.
    const v3 = await signVoucher(clientSigner, dp.voucher.channelId, '3000', pay.network);
    const claimPayload = (claims: { maxClaimableAmount: string; signature: Hex; totalClaimed: string }[]): PaymentPayload => ({
      x402Version: 2,
      accepted: requirements,
      payload: {
        type: 'claim',
        claims: claims.map((c) => ({
          voucher: { channel: dp.channelConfig, maxClaimableAmount: c.maxClaimableAmount },
          signature: c.signature,
          totalClaimed: c.totalClaimed,
        })),
      },
    });
    const settlePayload: PaymentPayload = { x402Version: 2, accepted: requirements, payload: { type: 'settle', receiver, token: pay.usdc } };

    // 3. The server claims (the facilitator adds the receiverAuthorizer's ClaimBatch signature) and settles.
    expect(await facilitator.settle(claimPayload([{ ...dp.voucher, totalClaimed: '1000' }]), requirements)).toMatchObject({ success: true });
    expect(await channelState(dp.channelConfig)).toEqual({ balance: depositAmount, totalClaimed: 1_000n });
    expect(
      await facilitator.settle(claimPayload([{ maxClaimableAmount: v3.maxClaimableAmount, signature: v3.signature, totalClaimed: '3000' }]), requirements),
    ).toMatchObject({
      success: true,
    });
    expect(await channelState(dp.channelConfig)).toEqual({ balance: depositAmount, totalClaimed: 3_000n });
    const settled = await facilitator.settle(settlePayload, requirements);
    expect(settled).toMatchObject({ success: true });
    expect(await usdcBalance(pay.rpcUrl, receiver)).toBe(receiverBefore + 3_000n);
    expect(await read<[bigint, bigint]>('receivers', [receiver, pay.usdc])).toEqual([3_000n, 3_000n]);
    // Escrow keeps the unclaimed rest: deposit - settled; the buyer paid the deposit only.
    expect(await usdcBalance(pay.rpcUrl, BATCH)).toBe(escrowBefore + depositAmount - 3_000n);
    expect(await usdcBalance(pay.rpcUrl, buyer.address)).toBe(buyerBefore - depositAmount);

    // 4. A cooperative refund of the rest (the server's enriched refund payload; the facilitator signs as
    //    receiverAuthorizer): the payer gets back all that was not claimed, and the refund nonce advances.
    const refundPayload: PaymentPayload = {
      x402Version: 2,
      accepted: requirements,
      payload: {
        type: 'refund',
        channelConfig: dp.channelConfig,
        voucher: { channelId: dp.voucher.channelId, maxClaimableAmount: v3.maxClaimableAmount, signature: v3.signature },
        amount: (depositAmount - 3_000n).toString(),
        refundNonce: '0',
        claims: [{ voucher: { channel: dp.channelConfig, maxClaimableAmount: v3.maxClaimableAmount }, signature: v3.signature, totalClaimed: '3000' }],
      },
    };
    expect(await facilitator.settle(refundPayload, requirements)).toMatchObject({ success: true });
    expect(await usdcBalance(pay.rpcUrl, buyer.address)).toBe(buyerBefore - 3_000n);
    expect(await channelState(dp.channelConfig)).toEqual({ balance: 3_000n, totalClaimed: 3_000n });
    expect(await read<bigint>('refundNonce', [dp.voucher.channelId])).toBe(1n);
    // The same refund again (same nonce): refused, nothing moves.
    expect(await facilitator.settle(refundPayload, requirements)).toMatchObject({ success: false });
    expect(await usdcBalance(pay.rpcUrl, buyer.address)).toBe(buyerBefore - 3_000n);
    expect(await usdcBalance(pay.rpcUrl, BATCH)).toBe(escrowBefore);
  });
});

/** The EIP-712 fields of ChannelConfig, read from our ABI's `getChannelId` input (so ABI and hash agree). */
const channelTypes = (
  x402BatchSettlementAbi.find((i) => i.type === 'function' && i.name === 'getChannelId') as {
    inputs: readonly { components: readonly { name: string; type: string }[] }[];
  }
).inputs[0].components.map(({ name, type }) => ({ name, type }));

// ---- deposits through Permit2DepositCollector ----

const P2C = PERMIT2_DEPOSIT_COLLECTOR_ADDRESS;
/** The batch settlement and the Permit2 collector (no name in common), with Permit2's errors, so a revert from any decodes by name. */
const P2_ABI = [...x402BatchSettlementAbi, ...permit2DepositCollectorAbi, ...permit2Abi.filter((i) => i.type === 'error')] as Abi;
const sendP2 = (caller: LocalAccount, functionName: string, args: readonly unknown[]) => chain.call(env.pay, caller, BATCH, P2_ABI, functionName, args);
/** The deposit witness types the official client signs with (`batchPermit2WitnessTypes`, not exported by @x402/evm). */
const { batchPermit2WitnessTypes } = (await x402EvmChunkDeclaring('batchPermit2WitnessTypes')) as {
  batchPermit2WitnessTypes: Record<string, readonly { name: string; type: string }[]>;
};

let permit2NonceSeq = 5_000n;
/**
 * `collectorData` for a Permit2 deposit of `amount` into `c`: `buyer`'s `PermitWitnessTransferFrom` with the
 * collector as spender and `DepositWitness(channelId)`, plus an optional EIP-2612 permit for Permit2.
 */
async function permit2Deposit(
  buyer: LocalAccount,
  c: Config,
  amount: bigint,
  o: { channelId?: Hex; deadline?: bigint; nonce?: bigint; eip2612Value?: bigint } = {},
): Promise<Hex> {
  const nonce = o.nonce ?? permit2NonceSeq++;
  const deadline = o.deadline ?? (await chain.chainNow(env.pay)) + 3_600n;
  const signature = await buyer.signTypedData({
    domain: { name: 'Permit2', chainId: env.pay.chainId, verifyingContract: PERMIT2_ADDRESS },
    types: batchPermit2WitnessTypes,
    primaryType: 'PermitWitnessTransferFrom',
    message: {
      permitted: { token: env.pay.usdc, amount },
      spender: P2C,
      nonce,
      deadline,
      witness: { channelId: o.channelId ?? (await channelIdOf(c)) },
    },
  });
  let eip2612: Hex = '0x';
  if (o.eip2612Value !== undefined) {
    const p = await chain.signPermitToPermit2(env.pay, buyer, o.eip2612Value, deadline);
    eip2612 = encodeAbiParameters(
      [{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint8' }, { type: 'bytes32' }, { type: 'bytes32' }],
      [p.value, p.deadline, p.v, p.r, p.s],
    );
  }
  return encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }, { type: 'bytes' }, { type: 'bytes' }], [nonce, deadline, signature, eip2612]);
}

describe('Permit2DepositCollector', () => {
  it('is placed at the canonical address, bound to the batch settlement and Permit2, with the deposit witness type', async () => {
    const client = chain.publicClientOf(env.pay);
    expect(env.pay.permit2DepositCollector).toBe(P2C);
    expect(await client.getCode({ address: P2C })).toBe(permit2DepositCollectorRuntimeCode());
    const read2 = (functionName: 'BATCH_SETTLEMENT' | 'PERMIT2' | 'WITNESS_TYPE_STRING') =>
      client.readContract({ address: P2C, abi: permit2DepositCollectorAbi, functionName });
    expect(await read2('BATCH_SETTLEMENT')).toBe(BATCH);
    expect(await read2('PERMIT2')).toBe(PERMIT2_ADDRESS);
    expect(await read2('WITNESS_TYPE_STRING')).toBe('DepositWitness witness)DepositWitness(bytes32 channelId)TokenPermissions(address token,uint256 amount)');
  });

  it('a Permit2 deposit creates the channel with exactly the permitted amount, once, for its own channel only', async () => {
    const buyer = env.pay.buyers[0];
    const attacker = env.pay.buyers[7];
    await chain.approvePermit2(env.pay, buyer);
    const c = channelOf(buyer);
    const id = await channelIdOf(c);
    const before = await usdcBalance(env.pay.rpcUrl, buyer.address);
    const escrowBefore = await usdcBalance(env.pay.rpcUrl, BATCH);
    const data = await permit2Deposit(buyer, c, 200_000n);

    // The collector takes orders from the batch settlement only: an attacker calling it directly with the
    // buyer's authorization (Permit2 would send the funds to the caller) is refused.
    expect(await chain.call(env.pay, attacker, P2C, P2_ABI, 'collect', [buyer.address, env.pay.usdc, 200_000n, id, data])).toBe('OnlyBatchSettlement');
    // More than the buyer permitted: the amount is part of the signed permit.
    expect(await sendP2(env.pay.facilitator, 'deposit', [c, 200_001n, P2C, data])).toBe('InvalidSigner');
    // The same authorization for another channel of the same payer (e.g. one whose receiver is the attacker): the
    // witness binds the channel id.
    expect(await sendP2(env.pay.facilitator, 'deposit', [channelOf(buyer, { receiver: attacker.address }), 200_000n, P2C, data])).toBe('InvalidSigner');
    // An authorization signed by someone else than the channel's payer.
    expect(await sendP2(attacker, 'deposit', [c, 200_000n, P2C, await permit2Deposit(attacker, c, 200_000n)])).toBe('InvalidSigner');
    expect(await channelState(c)).toEqual({ balance: 0n, totalClaimed: 0n });

    const client = chain.publicClientOf(env.pay);
    const fromBlock = await client.getBlockNumber();
    expect(await sendP2(env.pay.facilitator, 'deposit', [c, 200_000n, P2C, data])).toBe('success');
    const logs = parseEventLogs({ abi: x402BatchSettlementAbi, logs: await client.getLogs({ address: BATCH, fromBlock }) });
    expect(logs.map((l) => l.eventName)).toEqual(['ChannelCreated', 'Deposited']);
    expect(logs[1].args).toMatchObject({ channelId: id, collector: P2C, amount: 200_000n, balance: 200_000n });
    expect(await channelState(c)).toEqual({ balance: 200_000n, totalClaimed: 0n });
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(before - 200_000n);
    expect(await usdcBalance(env.pay.rpcUrl, BATCH)).toBe(escrowBefore + 200_000n);
    expect(await usdcBalance(env.pay.rpcUrl, P2C)).toBe(0n); // Permit2 pays the escrow directly

    // Replayed: the Permit2 nonce is spent.
    expect(await sendP2(env.pay.facilitator, 'deposit', [c, 200_000n, P2C, data])).toBe('InvalidNonce');
    // Expired authorization.
    const now = await chain.chainNow(env.pay);
    const expiring = await permit2Deposit(buyer, c, 50_000n, { deadline: now + 60n });
    await chain.onSnapshot(env.pay, async () => {
      await chain.warpTo(env.pay, now + 61n);
      expect(await sendP2(env.pay.facilitator, 'deposit', [c, 50_000n, P2C, expiring])).toBe('SignatureExpired');
    });
    // A top-up with a fresh authorization.
    expect(await sendP2(env.pay.facilitator, 'deposit', [c, 50_000n, P2C, expiring])).toBe('success');
    expect(await channelState(c)).toEqual({ balance: 250_000n, totalClaimed: 0n });
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(before - 250_000n);
  });

  it('with the EIP-2612 extension, a payer who never approved Permit2 deposits; a short permit is refused', async () => {
    const buyer = env.pay.buyers[5];
    const allowance = () =>
      chain.publicClientOf(env.pay).readContract({ address: env.pay.usdc, abi: usdcAbi, functionName: 'allowance', args: [buyer.address, PERMIT2_ADDRESS] });
    expect(await allowance()).toBe(0n);
    const c = channelOf(buyer);
    const before = await usdcBalance(env.pay.rpcUrl, buyer.address);
    // Without an allowance, Permit2's pull fails in the token.
    expect(await sendP2(env.pay.facilitator, 'deposit', [c, 70_000n, P2C, await permit2Deposit(buyer, c, 70_000n)])).toMatch(/TRANSFER_FROM_FAILED/);
    expect(await sendP2(env.pay.facilitator, 'deposit', [c, 70_000n, P2C, await permit2Deposit(buyer, c, 70_000n, { eip2612Value: 69_999n })])).toBe(
      'Permit2612AmountMismatch',
    );
    expect(await sendP2(env.pay.facilitator, 'deposit', [c, 70_000n, P2C, await permit2Deposit(buyer, c, 70_000n, { eip2612Value: 70_000n })])).toBe('success');
    expect(await channelState(c)).toEqual({ balance: 70_000n, totalClaimed: 0n });
    expect(await usdcBalance(env.pay.rpcUrl, buyer.address)).toBe(before - 70_000n);
    expect(await allowance()).toBe(0n);
  });

  it('the official @x402/evm client and facilitator (assetTransferMethod permit2), unchanged: deposit through the collector, claim, settle', async () => {
    const pay = env.pay;
    const wallet = chain.walletOf(pay, pay.facilitator).extend(publicActions);
    type SignerInput = Parameters<typeof toFacilitatorEvmSigner>[0];
    const signer = toFacilitatorEvmSigner({ ...wallet, address: pay.facilitator.address } as unknown as SignerInput);
    const facilitator = new x402Facilitator().register(pay.network, new BatchFacilitatorScheme(signer, pay.facilitator));
    const buyer = pay.buyers[0]; // approved Permit2 above
    const receiver: Address = '0x000000000000000000000000000000000000bee5';
    const clientSigner = toClientEvmSigner(buyer, chain.publicClientOf(pay));
    const client = new x402Client().register('eip155:*', new BatchClientScheme(clientSigner));
    const requirements: PaymentRequirements = {
      scheme: 'batch-settlement',
      network: pay.network,
      asset: pay.usdc,
      amount: '2000',
      payTo: receiver,
      maxTimeoutSeconds: 3600,
      extra: { receiverAuthorizer: pay.facilitator.address, withdrawDelay: 900, name: 'USD Coin', version: '2', assetTransferMethod: 'permit2' },
    };
    const challenge: PaymentRequired = {
      x402Version: 2,
      resource: { url: 'http://127.0.0.1/api/v1/execute', description: 'test', mimeType: 'application/json' },
      accepts: [requirements],
    };
    const buyerBefore = await usdcBalance(pay.rpcUrl, buyer.address);
    const escrowBefore = await usdcBalance(pay.rpcUrl, BATCH);

    const first: PaymentPayload = await client.createPaymentPayload(challenge);
    const dp = first.payload as {
      type: string;
      channelConfig: Config;
      voucher: { channelId: Hex; maxClaimableAmount: string; signature: Hex };
      deposit: { amount: string; authorization: { permit2Authorization?: { spender: Address; witness: { channelId: Hex } } } };
    };
    expect(dp.type).toBe('deposit');
    expect(dp.deposit.authorization.permit2Authorization).toMatchObject({ spender: P2C, witness: { channelId: dp.voucher.channelId } });
    expect(await facilitator.verify(first, requirements)).toMatchObject({ isValid: true, payer: buyer.address });
    const deposited = await facilitator.settle(first, requirements);
    expect(deposited).toMatchObject({ success: true, network: pay.network });
    const depositAmount = BigInt(dp.deposit.amount);
    const receipt = await chain.publicClientOf(pay).getTransactionReceipt({ hash: deposited.transaction as Hex });
    const [dep] = parseEventLogs({ abi: x402BatchSettlementAbi, eventName: 'Deposited', logs: receipt.logs });
    expect(dep.args).toMatchObject({ channelId: dp.voucher.channelId, collector: P2C, amount: depositAmount });
    expect(await channelState(dp.channelConfig)).toEqual({ balance: depositAmount, totalClaimed: 0n });
    expect(await usdcBalance(pay.rpcUrl, buyer.address)).toBe(buyerBefore - depositAmount);
    // The same deposit payload again: refused (spent Permit2 nonce), nothing moves.
    expect((await facilitator.settle(first, requirements)).success).toBe(false);
    expect(await usdcBalance(pay.rpcUrl, buyer.address)).toBe(buyerBefore - depositAmount);

    // The first call's voucher is claimed and settled to the receiver from the Permit2-funded escrow.
    const claim: PaymentPayload = {
      x402Version: 2,
      accepted: requirements,
      payload: {
        type: 'claim',
        claims: [
          { voucher: { channel: dp.channelConfig, maxClaimableAmount: dp.voucher.maxClaimableAmount }, signature: dp.voucher.signature, totalClaimed: '2000' },
        ],
      },
    };
    expect(await facilitator.settle(claim, requirements)).toMatchObject({ success: true });
    expect(
      await facilitator.settle({ x402Version: 2, accepted: requirements, payload: { type: 'settle', receiver, token: pay.usdc } }, requirements),
    ).toMatchObject({
      success: true,
    });
    expect(await usdcBalance(pay.rpcUrl, receiver)).toBe(2_000n);
    expect(await channelState(dp.channelConfig)).toEqual({ balance: depositAmount, totalClaimed: 2_000n });
    expect(await usdcBalance(pay.rpcUrl, BATCH)).toBe(escrowBefore + depositAmount - 2_000n);
  });
});

describe('Permit2DepositCollector with the official eip2612GasSponsoring extension', () => {
  it('a payer who never approved Permit2 opens a channel through the official client and facilitator, unchanged', async () => {
    const pay = env.pay;
    const wallet = chain.walletOf(pay, pay.facilitator).extend(publicActions);
    type SignerInput = Parameters<typeof toFacilitatorEvmSigner>[0];
    const signer = toFacilitatorEvmSigner({ ...wallet, address: pay.facilitator.address } as unknown as SignerInput);
    const facilitator = new x402Facilitator().register(pay.network, new BatchFacilitatorScheme(signer, pay.facilitator));
    const buyer = pay.buyers[6];
    const allowance = () =>
      chain.publicClientOf(pay).readContract({ address: pay.usdc, abi: usdcAbi, functionName: 'allowance', args: [buyer.address, PERMIT2_ADDRESS] });
    expect(await allowance()).toBe(0n);
    const client = new x402Client().register('eip155:*', new BatchClientScheme(toClientEvmSigner(buyer, chain.publicClientOf(pay))));
    const requirements: PaymentRequirements = {
      scheme: 'batch-settlement',
      network: pay.network,
      asset: pay.usdc,
      amount: '3000',
      payTo: '0x000000000000000000000000000000000000bee6',
      maxTimeoutSeconds: 3600,
      extra: { receiverAuthorizer: pay.facilitator.address, withdrawDelay: 900, name: 'USD Coin', version: '2', assetTransferMethod: 'permit2' },
    };
    const payment = await client.createPaymentPayload({
      x402Version: 2,
      resource: { url: 'http://127.0.0.1/api/v1/execute', description: 'test', mimeType: 'application/json' },
      accepts: [requirements],
      extensions: { eip2612GasSponsoring: {} },
    });
    expect(payment.extensions?.eip2612GasSponsoring).toBeDefined();
    const dp = payment.payload as { channelConfig: Config; deposit: { amount: string } };
    const before = await usdcBalance(pay.rpcUrl, buyer.address);
    expect(await facilitator.verify(payment, requirements)).toMatchObject({ isValid: true, payer: buyer.address });
    expect(await facilitator.settle(payment, requirements)).toMatchObject({ success: true });
    const depositAmount = BigInt(dp.deposit.amount);
    expect(await channelState(dp.channelConfig)).toEqual({ balance: depositAmount, totalClaimed: 0n });
    expect(await usdcBalance(pay.rpcUrl, buyer.address)).toBe(before - depositAmount);
    // The EIP-2612 permit gave Permit2 exactly the deposit, and Permit2 spent it.
    expect(await allowance()).toBe(0n);
  });
});
