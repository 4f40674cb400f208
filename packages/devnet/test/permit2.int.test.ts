// Permit2 on the dev payment chain (src/permit2): placed by startDevStack at its canonical address with the
// right EIP-712 domain, and working with the payloads @x402/evm's own clients sign. This tests Permit2
// alone: the test impersonates each x402 proxy's address (the payload's `spender`) on anvil and makes the
// Permit2 call a proxy makes, `permitWitnessTransferFrom` with the x402 witness. Our x402UptoPermit2Proxy
// itself is tested in packages/x402-contracts.
import { x402Client } from '@x402/core/client';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { permit2WitnessTypes, toClientEvmSigner, uptoPermit2WitnessTypes, x402ExactPermit2ProxyAddress, x402UptoPermit2ProxyAddress } from '@x402/evm';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { UptoEvmScheme as UptoEvmClientScheme } from '@x402/evm/upto/client';
import { createPublicClient, createWalletClient, getAddress, hashStruct, http, maxUint256, parseEther, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMIT2_ADDRESS, permit2Abi, permit2DomainSeparator, isPermit2Runtime } from '../src/permit2/index.js';
import { setupPaymentChain } from '../src/paymentChain.js';
import { startDevStack, type DevStack } from '../src/stack.js';
import { usdcAbi, usdcBalance } from '../src/usdc.js';
import { PERMIT2_ADDRESS as X402_PERMIT2_ADDRESS } from '@x402/evm';

let stack: DevStack;
beforeAll(async () => {
  stack = await startDevStack({ preferPrivateRedis: true });
});
afterAll(async () => {
  await stack?.stop();
});

type Permit2Payload = {
  signature: Hex;
  permit2Authorization: {
    from: Address;
    permitted: { token: Address; amount: string };
    spender: Address;
    nonce: string;
    deadline: string;
    witness: Record<string, string>;
  };
};
type WitnessTypes = typeof permit2WitnessTypes | typeof uptoPermit2WitnessTypes;

/** Permit2's `witnessTypeString` for an x402 witness: the tail of `PermitWitnessTransferFrom(...)` after `deadline,`. */
function witnessTypeString(types: WitnessTypes): string {
  const fields = (list: readonly { name: string; type: string }[]) => list.map((f) => `${f.type} ${f.name}`).join(',');
  return `Witness witness)TokenPermissions(${fields(types.TokenPermissions)})Witness(${fields(types.Witness)})`;
}

/** Sends Permit2 `permitWitnessTransferFrom` as `spender` (impersonated), as the x402 proxy would; returns the receipt status. */
async function settleAsProxy(payload: Permit2Payload, types: WitnessTypes, requestedAmount: bigint): Promise<'success' | 'reverted'> {
  const { chain, rpcUrl } = stack.payment;
  const auth = payload.permit2Authorization;
  const spender = getAddress(auth.spender);
  const witness = Object.fromEntries(
    types.Witness.map((f) => [f.name, f.type === 'address' ? getAddress(auth.witness[f.name]) : BigInt(auth.witness[f.name])]),
  );
  // The witness struct differs per scheme (upto adds `facilitator`): typed loosely, hashed by viem per its declared fields.
  const witnessHash = hashStruct({ data: witness, primaryType: 'Witness', types: { Witness: [...types.Witness] as { name: string; type: string }[] } });
  const publicClient = createPublicClient({ chain, transport: http(rpcUrl) });
  const test = createWalletClient({ chain, transport: http(rpcUrl) });
  await test.request({ method: 'anvil_setBalance' as never, params: [spender, `0x${parseEther('1').toString(16)}`] as never });
  await test.request({ method: 'anvil_impersonateAccount' as never, params: [spender] as never });
  try {
    const wallet = createWalletClient({ account: spender, chain, transport: http(rpcUrl) });
    const hash = await wallet.writeContract({
      address: PERMIT2_ADDRESS,
      abi: permit2Abi,
      functionName: 'permitWitnessTransferFrom',
      args: [
        {
          permitted: { token: getAddress(auth.permitted.token), amount: BigInt(auth.permitted.amount) },
          nonce: BigInt(auth.nonce),
          deadline: BigInt(auth.deadline),
        },
        { to: getAddress(auth.witness.to), requestedAmount },
        getAddress(auth.from),
        witnessHash,
        witnessTypeString(types),
        payload.signature,
      ],
      gas: 300_000n, // fixed, so a transfer that would revert is mined (and reverts) instead of failing estimation
    });
    return (await publicClient.waitForTransactionReceipt({ hash })).status;
  } finally {
    await test.request({ method: 'anvil_stopImpersonatingAccount' as never, params: [spender] as never });
  }
}

/** The buyer's one-time ERC-20 approval of Permit2 (what x402's Permit2 path asks of a buyer). */
async function approvePermit2(buyer: DevStack['payment']['buyers'][number]): Promise<void> {
  const { chain, rpcUrl, usdc } = stack.payment;
  const wallet = createWalletClient({ account: buyer, chain, transport: http(rpcUrl) });
  const hash = await wallet.writeContract({ address: usdc, abi: usdcAbi, functionName: 'approve', args: [PERMIT2_ADDRESS, maxUint256] });
  await createPublicClient({ chain, transport: http(rpcUrl) }).waitForTransactionReceipt({ hash });
}

/**
 * The buyer approves Permit2, then @x402/evm's own client of `scheme` signs a Permit2 payment of `amount`
 * (USDC base units; for `upto` the ceiling) to `payTo`, for a challenge on the dev payment chain's USDC with a
 * 60 s timeout. `extra` is what each scheme's Permit2 path asks: USDC's EIP-712 name and version, and
 * `assetTransferMethod: "permit2"` (exact) or the facilitator's address (upto).
 */
async function signPermit2Payment(
  buyer: DevStack['payment']['buyers'][number],
  scheme: 'exact' | 'upto',
  amount: string,
  payTo: Address,
): Promise<Permit2Payload> {
  const { payment } = stack;
  await approvePermit2(buyer);
  const requirements: PaymentRequirements = {
    scheme,
    network: payment.network,
    asset: payment.usdc,
    amount,
    payTo,
    maxTimeoutSeconds: 60,
    extra: {
      name: 'USD Coin',
      version: '2',
      ...(scheme === 'exact' ? { assetTransferMethod: 'permit2' } : { facilitatorAddress: payment.facilitator.address }),
    },
  };
  const signer = toClientEvmSigner(buyer);
  const client = new x402Client().register('eip155:*', scheme === 'upto' ? new UptoEvmClientScheme(signer) : new ExactEvmClientScheme(signer));
  const challenge: PaymentRequired = {
    x402Version: 2,
    resource: { url: 'http://127.0.0.1/api/v1/execute', description: 'test', mimeType: 'application/json' },
    accepts: [requirements],
  };
  const { payload } = await client.createPaymentPayload(challenge);
  return payload as unknown as Permit2Payload;
}

describe('Permit2 on the dev payment chain', () => {
  it('sits at the canonical address @x402/evm uses, with the EIP-712 domain of chain 8453 and that address', async () => {
    const { payment } = stack;
    expect(X402_PERMIT2_ADDRESS).toBe(PERMIT2_ADDRESS);
    expect(payment.permit2).toBe(PERMIT2_ADDRESS);
    const client = createPublicClient({ chain: payment.chain, transport: http(payment.rpcUrl) });
    expect(isPermit2Runtime(await client.getCode({ address: PERMIT2_ADDRESS }), 8453)).toBe(true);
    const separator = await client.readContract({ address: PERMIT2_ADDRESS, abi: permit2Abi, functionName: 'DOMAIN_SEPARATOR' });
    expect(separator).toBe(permit2DomainSeparator(8453));
    // Setting the chain up again sends nothing and keeps the code.
    const blockBefore = await client.getBlockNumber();
    const again = await setupPaymentChain(payment.rpcUrl);
    expect(again.permit2).toBe(PERMIT2_ADDRESS);
    expect(await client.getBlockNumber()).toBe(blockBefore);
  });

  it('settles an x402 `exact` Permit2 payload signed by @x402/evm, once', async () => {
    const { payment } = stack;
    const buyer = payment.buyers[3];
    const payTo = payment.buyers[6].address;
    const p2 = await signPermit2Payment(buyer, 'exact', '25000', payTo); // 0.025 USDC
    expect(getAddress(p2.permit2Authorization.spender)).toBe(getAddress(x402ExactPermit2ProxyAddress));

    const buyerBefore = await usdcBalance(payment.rpcUrl, buyer.address);
    const payToBefore = await usdcBalance(payment.rpcUrl, payTo);
    expect(await settleAsProxy(p2, permit2WitnessTypes, 25_000n)).toBe('success');
    expect(await usdcBalance(payment.rpcUrl, buyer.address)).toBe(buyerBefore - 25_000n);
    expect(await usdcBalance(payment.rpcUrl, payTo)).toBe(payToBefore + 25_000n);

    // Replay of the same signed permit: Permit2's nonce bitmap refuses it, nothing moves.
    expect(await settleAsProxy(p2, permit2WitnessTypes, 25_000n)).toBe('reverted');
    expect(await usdcBalance(payment.rpcUrl, buyer.address)).toBe(buyerBefore - 25_000n);
  });

  it('settles an x402 `upto` Permit2 payload for less than its ceiling, and refuses more', async () => {
    const { payment } = stack;
    const buyer = payment.buyers[4];
    const payTo = payment.buyers[7].address;
    const p2 = await signPermit2Payment(buyer, 'upto', '100000', payTo); // ceiling 0.1 USDC
    expect(getAddress(p2.permit2Authorization.spender)).toBe(getAddress(x402UptoPermit2ProxyAddress));
    expect(getAddress(p2.permit2Authorization.witness.facilitator)).toBe(payment.facilitator.address);

    const buyerBefore = await usdcBalance(payment.rpcUrl, buyer.address);
    const payToBefore = await usdcBalance(payment.rpcUrl, payTo);
    // Over the signed ceiling: Permit2 refuses (InvalidAmount), nothing moves and the nonce stays unused.
    expect(await settleAsProxy(p2, uptoPermit2WitnessTypes, 100_001n)).toBe('reverted');
    expect(await usdcBalance(payment.rpcUrl, buyer.address)).toBe(buyerBefore);
    // What was used: 0.042 USDC of the 0.1 ceiling.
    expect(await settleAsProxy(p2, uptoPermit2WitnessTypes, 42_000n)).toBe('success');
    expect(await usdcBalance(payment.rpcUrl, buyer.address)).toBe(buyerBefore - 42_000n);
    expect(await usdcBalance(payment.rpcUrl, payTo)).toBe(payToBefore + 42_000n);
  });

  it('refuses a payload whose witness was changed after signing (funds redirected)', async () => {
    const { payment } = stack;
    const buyer = payment.buyers[5];
    const p2 = await signPermit2Payment(buyer, 'exact', '10000', payment.treasury.address);
    const attacker = payment.buyers[0].address;
    const tampered: Permit2Payload = {
      ...p2,
      permit2Authorization: { ...p2.permit2Authorization, witness: { ...p2.permit2Authorization.witness, to: attacker } },
    };
    const before = await usdcBalance(payment.rpcUrl, buyer.address);
    expect(await settleAsProxy(tampered, permit2WitnessTypes, 10_000n)).toBe('reverted');
    expect(await usdcBalance(payment.rpcUrl, buyer.address)).toBe(before);
  });
});
