import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { PERMIT2_ADDRESS, uptoPermit2WitnessTypes, x402UptoPermit2ProxyAddress } from '@x402/evm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { permit2NonceHex, UptoScheme } from '../src/schemes/upto.js';
import type { SchemeContext } from '../src/schemes/strategy.js';

// The `upto` strategy's local checks (packages/payments README "Payment schemes"): its requirements,
// how it reads a Permit2 payload (payer, nonce, window) and recovers its signer. Everything else
// (allowance, balance, simulation) is the official facilitator's, exercised on anvil in
// apps/gateway/test/attacks/uptoRoutedPayment.int.test.ts.

const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const FACILITATOR = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const terms = { network: 'eip155:8453' as const, asset: USDC as `0x${string}`, payTo: PAY_TO as `0x${string}`, assetName: 'USD Coin', assetVersion: '2' };

function scheme(facilitatorAddress: string | null = FACILITATOR): UptoScheme {
  const ctx = { terms, facilitatorExtra: () => (facilitatorAddress ? { facilitatorAddress } : undefined) } as unknown as SchemeContext;
  return new UptoScheme(ctx);
}

const buyer = privateKeyToAccount(generatePrivateKey());
const now = () => BigInt(Math.floor(Date.now() / 1000));

/** An `upto` PaymentPayload signed by `buyer` as the official client signs it, with overrides. */
async function signed(requirements: PaymentRequirements, o: { nonce?: bigint; deadline?: bigint; validAfter?: bigint } = {}): Promise<PaymentPayload> {
  const permit = {
    permitted: { token: USDC as `0x${string}`, amount: BigInt(requirements.amount) },
    spender: x402UptoPermit2ProxyAddress,
    nonce: o.nonce ?? 123456789n,
    deadline: o.deadline ?? now() + 300n,
    witness: { to: PAY_TO as `0x${string}`, facilitator: FACILITATOR as `0x${string}`, validAfter: o.validAfter ?? now() - 600n },
  };
  const signature = await buyer.signTypedData({
    domain: { name: 'Permit2', chainId: 8453, verifyingContract: PERMIT2_ADDRESS },
    types: uptoPermit2WitnessTypes,
    primaryType: 'PermitWitnessTransferFrom',
    message: permit,
  });
  return {
    x402Version: 2,
    accepted: requirements,
    payload: {
      signature,
      permit2Authorization: {
        from: buyer.address,
        permitted: { token: USDC, amount: requirements.amount },
        spender: permit.spender,
        nonce: permit.nonce.toString(),
        deadline: permit.deadline.toString(),
        witness: { to: PAY_TO, facilitator: FACILITATOR, validAfter: permit.witness.validAfter.toString() },
      },
    },
  };
}

describe('UptoScheme', () => {
  it('offers a Permit2 ceiling naming the facilitator, and nothing without a facilitator that supports upto', () => {
    expect(scheme(null).requirements(3000n)).toBeUndefined();
    expect(scheme().requirements(3000n)).toEqual({
      scheme: 'upto',
      network: 'eip155:8453',
      asset: USDC,
      amount: '3000',
      payTo: PAY_TO,
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2', assetTransferMethod: 'permit2', facilitatorAddress: FACILITATOR },
    });
  });

  it('reads payer and Permit2 nonce, reserved in the Permit2 nonce space, and recovers the payer', async () => {
    const s = scheme();
    const requirements = s.requirements(3000n)!;
    const payload = await signed(requirements, { nonce: 255n });
    const read = s.authorize(payload, requirements);
    expect(read).toEqual({ ok: true, auth: { payer: buyer.address, nonce: permit2NonceHex('255'), nonceSpace: PERMIT2_ADDRESS.toLowerCase() } });
    expect(permit2NonceHex('255')).toBe(`0x${'0'.repeat(62)}ff`);
    if (!read.ok) throw new Error('refused');
    expect(s.signedByPayer(payload, requirements, read.auth)).toBe(true);
    // a raised ceiling is not what the payer signed
    const raised = structuredClone(payload);
    (raised.payload as { permit2Authorization: { permitted: { amount: string } } }).permit2Authorization.permitted.amount = '9000';
    expect(s.signedByPayer(raised, requirements, read.auth)).toBe(false);
  });

  it('refuses a window longer than the challenge allows, a permit not valid yet, and a payload that is not Permit2', async () => {
    const s = scheme();
    const requirements = s.requirements(3000n)!;
    expect(s.authorize(await signed(requirements, { deadline: now() + 3600n }), requirements)).toEqual({
      ok: false,
      reason: 'authorization_validity_too_long',
    });
    expect(s.authorize(await signed(requirements, { validAfter: now() + 600n }), requirements)).toEqual({ ok: false, reason: 'permit2_not_yet_valid' });
    const eip3009 = { x402Version: 2, accepted: requirements, payload: { signature: '0x00', authorization: { from: buyer.address } } } as PaymentPayload;
    expect(s.authorize(eip3009, requirements)).toEqual({ ok: false, reason: 'unsupported_transfer_method' });
  });

  it("a resource's own window (a job's hour) is offered and accepted for that resource only; the payload's deadline is read back", async () => {
    const s = scheme();
    const job = s.requirements(3000n, { maxTimeoutSeconds: 3600 })!;
    const execute = s.requirements(3000n)!;
    expect(job).toEqual({ ...execute, maxTimeoutSeconds: 3600 });
    expect(s.requirements(3000n)).toBe(execute);
    const deadline = now() + 3600n;
    const hour = await signed(job, { deadline });
    expect(s.authorize(hour, job)).toMatchObject({ ok: true });
    // matched to the 300 s entry (another resource), the same deadline is too long
    expect(s.authorize(hour, execute)).toEqual({ ok: false, reason: 'authorization_validity_too_long' });
    // beyond the hour plus the clock skew, refused for the job too
    expect(s.authorize(await signed(job, { deadline: now() + 3600n + 600n }), job)).toEqual({ ok: false, reason: 'authorization_validity_too_long' });
    expect(s.deadline(hour)).toBe(Number(deadline));
  });
});
