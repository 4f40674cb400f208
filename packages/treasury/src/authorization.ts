import { parseAbi, parseAbiItem, type PublicClient } from 'viem';

/** EIP-3009 `transferWithAuthorization` fields carried by an exact-scheme EVM payload. */
export interface Eip3009Authorization {
  from: `0x${string}`;
  to: `0x${string}`;
  /** integer string, asset base units */
  value: string;
  /** integer string, unix seconds */
  validAfter: string;
  /** integer string, unix seconds */
  validBefore: string;
  /** 32-byte hex */
  nonce: `0x${string}`;
}

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

/** Canonical Permit2 (the same address on every EVM chain; `PERMIT2_ADDRESS` of `@x402/evm`). */
export const PERMIT2 = '0x000000000022D473030F116dDEE9F6B43aC78BA3' as const;

/** Permit2's `nonceBitmap(owner, wordPos)`: bit `nonce & 0xff` of word `nonce >> 8` is set once the nonce is used. */
export const PERMIT2_NONCE_BITMAP_ABI = parseAbi(['function nonceBitmap(address owner, uint256 wordPos) view returns (uint256)']);

/**
 * Whether the Permit2 unordered nonce `nonce` (a uint256, as a bigint or `0x` hex) of `owner` was
 * used (an x402 `upto` settlement, whatever its amount). Throws on RPC failure.
 */
export async function permit2NonceUsed(client: PublicClient, owner: `0x${string}`, nonce: bigint | `0x${string}`): Promise<boolean> {
  const n = BigInt(nonce);
  const word = await client.readContract({ address: PERMIT2, abi: PERMIT2_NONCE_BITMAP_ABI, functionName: 'nonceBitmap', args: [owner, n >> 8n] });
  return ((word >> (n & 0xffn)) & 1n) === 1n;
}
