import type { RefundLedger } from '@acg/bundles';
import type { Hash, PublicClient } from 'viem';

/**
 * Moves the refunds of every sealed block at or below the node's head into the ledger when that block is the
 * canonical one at its height (README "Bundle API of 2026"); run after each bidder attempt and before each
 * refund lookup, so what the `buildernet_*` methods answer is what landed.
 */
export async function settleLandedRefunds(ledger: RefundLedger, client: PublicClient): Promise<void> {
  const head = await client.getBlockNumber({ cacheTime: 0 });
  await ledger.settle(head, (block) =>
    client
      .getBlock({ blockNumber: block })
      .then((b) => b.hash as Hash)
      .catch(() => undefined),
  );
}
