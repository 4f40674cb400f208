import { parseTransaction, type Hash, type Hex, type PublicClient, type TransactionSerialized } from 'viem';

/**
 * Dev chain only (BUILDER_DEV_MINING): mines an already sealed and submitted block on anvil so
 * that its inclusion is observable, with anvil's own methods (never reached by the production
 * path): automine off, the node's pending public transactions taken out (`anvil_dropTransaction`,
 * re-sent after ours), `anvil_setCoinbase` to the builder's coinbase, our transactions sent in
 * order, `evm_mine` at the block's timestamp, automine back on. Needs anvil's `--order fifo`.
 * The coinbase pays refunds and the proposer out of the fees it earns inside the block, which
 * anvil's pool does not know when the transactions are sent: its balance is raised for the sending
 * (`anvil_setBalance`) and lowered by as much once the block is mined.
 * The mined block has anvil's own state root and hash, not the sealed ones.
 *
 * @returns the mined block's number, hash and transaction hashes, or undefined when the head moved meanwhile.
 */
export async function mineOnDevChain(
  client: PublicClient,
  block: { parent: bigint; coinbase: Hex; timestamp: bigint; transactions: readonly { raw: Hex; hash: Hash; from: Hex }[] },
): Promise<{ number: bigint; hash: Hash; txHashes: Hash[] } | undefined> {
  const rpc = async <T = unknown>(method: string, params: unknown[]): Promise<T> =>
    (await client.request({ method: method as never, params: params as never })) as T;
  type TxPool = { pending?: Record<string, Record<string, { hash: Hash }>> };
  await rpc('evm_setAutomine', [false]);
  let mined: { number: bigint; hash: Hash; txHashes: Hash[] } | undefined;
  try {
    const head = await client.getBlockNumber({ cacheTime: 0 });
    if (head !== block.parent) return undefined;
    const content = await rpc<TxPool>('txpool_content', []).catch((): TxPool => ({ pending: {} }));
    const pending = Object.values(content.pending ?? {}).flatMap((byNonce) => Object.values(byNonce).map((t) => t.hash));
    const ours = new Set(block.transactions.map((t) => t.hash));
    const held: Hex[] = [];
    for (const h of pending) {
      const raw = ours.has(h) ? null : await rpc<Hex | null>('eth_getRawTransactionByHash', [h]).catch(() => null);
      await rpc('anvil_dropTransaction', [h]).catch(() => undefined);
      if (raw) held.push(raw);
    }
    await rpc('anvil_setCoinbase', [block.coinbase]);
    // what the coinbase's own transactions spend at most: value + gas × fee cap
    const spends = block.transactions
      .map((t) => parseTransaction(t.raw as TransactionSerialized))
      .filter((_, i) => block.transactions[i].from.toLowerCase() === block.coinbase.toLowerCase())
      .reduce((a, p) => a + (p.value ?? 0n) + (p.gas ?? 0n) * (p.maxFeePerGas ?? p.gasPrice ?? 0n), 0n);
    const lent = spends > 0n ? spends : 0n;
    if (lent > 0n) {
      const balance = await client.getBalance({ address: block.coinbase, blockTag: 'latest' });
      await rpc('anvil_setBalance', [block.coinbase, `0x${(balance + lent).toString(16)}`]);
    }
    for (const t of block.transactions) await rpc('eth_sendRawTransaction', [t.raw]);
    for (const raw of held) await rpc('eth_sendRawTransaction', [raw]).catch(() => undefined);
    await rpc('evm_mine', [Number(block.timestamp)]);
    if (lent > 0n) {
      const balance = await client.getBalance({ address: block.coinbase, blockTag: 'latest' });
      await rpc('anvil_setBalance', [block.coinbase, `0x${(balance > lent ? balance - lent : 0n).toString(16)}`]);
    }
    const b = await client.getBlock({ blockNumber: block.parent + 1n });
    mined = { number: b.number, hash: b.hash, txHashes: b.transactions as Hash[] };
  } finally {
    await rpc('evm_setAutomine', [true]).catch(() => undefined);
  }
  // a transaction that arrived between evm_mine and automine on would wait for the next one
  const left = await rpc<{ pending?: string }>('txpool_status', []).catch(() => ({ pending: '0x0' }));
  if (left.pending && BigInt(left.pending) > 0n) await rpc('evm_mine', []).catch(() => undefined);
  return mined;
}

/** Dev chain only: mines an empty block (a dev slot passes without a block of ours). */
export async function mineEmptyOnDevChain(client: PublicClient): Promise<void> {
  await client.request({ method: 'evm_mine' as never, params: [] as never });
}
