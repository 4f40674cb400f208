import { recoverTransactionAddress, type Hex, type PublicClient } from 'viem';

/**
 * A mined settlement's signed transaction as the node holds it (`eth_getRawTransactionByHash`) and its
 * signer (recovered from the bytes), for `trackSettlement`'s `raw`: what the finality round broadcasts
 * again when a reorg takes the transaction out before a round saw it, where nobody else can resubmit it
 * (a `batch-settlement` deposit, an `upto` settlement; docs/decisions.md "Confirmations and reorgs").
 * Undefined when the node does not answer (the first finality round reads them then).
 */
export async function signedTransaction(publicClient: PublicClient, txHash: Hex): Promise<{ tx: Hex; from: Hex } | undefined> {
  try {
    const tx = (await publicClient.request({ method: 'eth_getRawTransactionByHash', params: [txHash] })) as Hex | null;
    return tx ? { tx, from: await recoverTransactionAddress({ serializedTransaction: tx as never }) } : undefined;
  } catch {
    return undefined;
  }
}
