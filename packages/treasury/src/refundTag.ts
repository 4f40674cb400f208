import { concat, encodeFunctionData, erc20Abi, hexToString, parseAbiItem, stringToHex, type Hex, type PublicClient } from 'viem';

/**
 * Refunds that say on chain what they refund (docs/decisions.md "Reconciliation from the chain",
 * refund tags). A refund is the USDC `transfer(payer, amount)` followed by a tag: the refunded
 * payment's transaction hash (32 bytes), then the operation id (UTF-8). The token ignores calldata
 * past its arguments, so the transfer is unchanged; the tag lets the refund worker and the chain
 * reconciliation find a refund whose Redis record was lost (a restart without the last writes)
 * instead of sending it a second time.
 */

const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
/** `transfer(address,uint256)`: selector (4 bytes) and two words. */
const TRANSFER_CALL_HEX = 2 + 2 * (4 + 32 + 32);

/** What a refund's tag names. */
export interface RefundTag {
  paymentTxHash: Hex;
  operationId: string;
}

/** The calldata of a refund: `transfer(payer, amount)`, then its {@link RefundTag}. */
export function refundTransferData(r: { payer: Hex; amount: string | bigint; paymentTxHash: Hex; operationId: string }): Hex {
  const transfer = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [r.payer, BigInt(r.amount)] });
  return concat([transfer, r.paymentTxHash, stringToHex(r.operationId)]);
}

/** The tag of a refund's calldata, or undefined for a plain transfer (or anything else). */
export function readRefundTag(input: Hex): RefundTag | undefined {
  if (!input.toLowerCase().startsWith('0xa9059cbb') || input.length <= TRANSFER_CALL_HEX + 64) return undefined;
  const paymentTxHash = `0x${input.slice(TRANSFER_CALL_HEX, TRANSFER_CALL_HEX + 64)}` as Hex;
  const rest = input.slice(TRANSFER_CALL_HEX + 64);
  if (rest.length === 0 || rest.length % 2 !== 0) return undefined;
  return { paymentTxHash, operationId: hexToString(`0x${rest}`) };
}

/** One tagged refund found on chain: its transaction, the amount it moved and its tag. */
export interface RefundOnChain {
  txHash: Hex;
  amount: bigint;
  tag: RefundTag;
}

/**
 * The tagged refunds from `treasury` to `payer` of `asset` mined from `fromBlock` to the head whose
 * tag refunds `paymentTxHash` (and names `operationId`, when given): one `eth_getLogs`, then the
 * input of each matching transfer.
 */
export async function refundsOnChain(
  client: PublicClient,
  q: { asset: Hex; treasury: Hex; payer: Hex; paymentTxHash: Hex; fromBlock: bigint; operationId?: string },
): Promise<RefundOnChain[]> {
  const logs = await client.getLogs({ address: q.asset, event: TRANSFER, args: { from: q.treasury, to: q.payer }, fromBlock: q.fromBlock, toBlock: 'latest' });
  const found: RefundOnChain[] = [];
  for (const log of logs) {
    const tx = await client.getTransaction({ hash: log.transactionHash });
    const tag = readRefundTag(tx.input);
    if (!tag || tag.paymentTxHash.toLowerCase() !== q.paymentTxHash.toLowerCase()) continue;
    if (q.operationId !== undefined && tag.operationId !== q.operationId) continue;
    found.push({ txHash: log.transactionHash, amount: log.args.value ?? 0n, tag });
  }
  return found;
}
