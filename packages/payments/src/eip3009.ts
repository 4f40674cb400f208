import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { recoverTypedDataSigner } from '@acg/secp256k1';
import { authorizationTypes } from '@x402/evm';
import { isAddressEqual } from 'viem';
import type { Eip3009Authorization } from '@acg/treasury';

/**
 * Whether the payload's EIP-712 `TransferWithAuthorization` signature recovers to
 * `authorization.from`, checked locally (domain: the requirements' `extra.name`/`extra.version`,
 * the network's chain id, the asset as verifying contract). Only a cheap gate before a read-only
 * operation may start early in the x402 `upfront` flow: the facilitator's settle still verifies
 * everything (balance, nonce state, smart-wallet signatures). false for anything it cannot check
 * (ERC-1271/6492 wallets, malformed fields); never throws. Recovery through the native
 * libsecp256k1 binding (`@acg/secp256k1`), about 0.1 ms.
 */
export function signedByPayer(payload: PaymentPayload, requirements: PaymentRequirements, auth: Eip3009Authorization): boolean {
  try {
    const signature = (payload.payload as { signature?: unknown }).signature;
    const extra = requirements.extra as { name?: unknown; version?: unknown } | undefined;
    const chainId = Number(requirements.network.split(':')[1]);
    if (typeof signature !== 'string' || !/^0x[0-9a-fA-F]{130}$/.test(signature) || typeof extra?.name !== 'string' || typeof extra.version !== 'string') {
      return false;
    }
    if (!Number.isSafeInteger(chainId)) return false;
    const signer = recoverTypedDataSigner(
      {
        domain: { name: extra.name, version: extra.version, chainId, verifyingContract: requirements.asset as `0x${string}` },
        types: authorizationTypes,
        primaryType: 'TransferWithAuthorization',
        message: {
          from: auth.from,
          to: auth.to,
          value: BigInt(auth.value),
          validAfter: BigInt(auth.validAfter),
          validBefore: BigInt(auth.validBefore),
          nonce: auth.nonce,
        },
      },
      signature as `0x${string}`,
    );
    return isAddressEqual(signer, auth.from);
  } catch {
    return false;
  }
}
