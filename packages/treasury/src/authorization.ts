import { parseAbiItem, type PublicClient } from 'viem';

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
