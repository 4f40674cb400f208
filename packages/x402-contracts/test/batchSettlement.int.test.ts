// Our x402BatchSettlement and ERC3009DepositCollector (contracts/) on a real anvil payment chain with Circle
// USDC (@acg/devnet's setupPaymentChain places them at their canonical addresses): every rule of the x402
// `batch-settlement` EVM scheme and the attacks on it. Balances are read on chain.
import { TRANSFER_WITH_AUTHORIZATION_TYPES, usdcBalance } from '@acg/devnet';
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
import { ERC3009_DEPOSIT_COLLECTOR_ADDRESS, erc3009DepositCollectorRuntimeCode, X402_BATCH_SETTLEMENT_ADDRESS, x402BatchSettlementAbi } from '../src/index.js';
import { compileTestFixture } from '../scripts/compile.js';
import * as chain from './chain.js';

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
