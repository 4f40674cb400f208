import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { recoverTypedDataSigner } from '@acg/secp256k1';
import { authorizationTypes } from '@x402/evm';
import { isAddressEqual, parseAbiItem, type PublicClient } from 'viem';
import type { Eip3009Authorization } from './paymentHeader.js';

/** EIP-3009 `authorizationState(authorizer, nonce)` of USDC (FiatTokenV2): true once used. */
export const AUTHORIZATION_STATE_ABI = [
  {
    type: 'function',
    name: 'authorizationState',
    stateMutability: 'view',
    inputs: [
      { name: 'authorizer', type: 'address' },
      { name: 'nonce', type: 'bytes32' },
    ],
    outputs: [{ type: 'bool' }],
  },
] as const;

/** EIP-3009 event emitted when an authorization is used. */
export const AUTHORIZATION_USED = parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)');

/** Whether the EIP-3009 authorization (`from`, `nonce`) was used on `asset`. Throws on RPC failure. */
export function authorizationUsed(client: PublicClient, asset: `0x${string}`, from: `0x${string}`, nonce: `0x${string}`): Promise<boolean> {
  return client.readContract({ address: asset, abi: AUTHORIZATION_STATE_ABI, functionName: 'authorizationState', args: [from, nonce] });
}

/** The transaction that used the authorization, from its `AuthorizationUsed` log, or undefined. */
export async function authorizationTx(
  client: PublicClient,
  asset: `0x${string}`,
  from: `0x${string}`,
  nonce: `0x${string}`,
): Promise<`0x${string}` | undefined> {
  const logs = await client.getLogs({ address: asset, event: AUTHORIZATION_USED, args: { authorizer: from, nonce }, fromBlock: 'earliest' }).catch(() => []);
  return logs[0]?.transactionHash ?? undefined;
}

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
