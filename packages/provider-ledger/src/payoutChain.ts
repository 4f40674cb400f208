import { receiptOf, trackTreasuryTransfer, type TreasurySender } from '@acg/treasury';
import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { bytesToString, concatHex, encodeFunctionData, erc20Abi, hexToBytes, parseAbiItem, size, sliceHex, stringToHex, type Hex } from 'viem';
import { providerLedgerKeys } from './commands/keys.js';
import type { ProviderLedger } from './ledger.js';

/** ERC-20 `Transfer` (USDC). */
const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

/** Bytes of an ABI-encoded `transfer(address,uint256)` call: selector and two words. */
const TRANSFER_CALL_BYTES = 4 + 32 + 32;

/** Blocks below the head a pass with no chain cursor yet starts reading at (Base: about 5.5 hours). */
export const PAYOUT_CHAIN_LOOKBACK_BLOCKS = 10_000;

/** Blocks per `eth_getLogs` request of the payout scan. */
const CHUNK_BLOCKS = 2_000n;

const TAG = /^acg-payout:(pay_[0-9A-HJKMNP-TV-Z]{26}):(prv_[0-9A-HJKMNP-TV-Z]{26})$/;

/**
 * The calldata of a payout's treasury transfer: USDC `transfer(to, amount)` followed by the tag
 * `acg-payout:<payout_id>:<provider_id>` (UTF-8). The token reads only the two arguments (ABI
 * decoding ignores trailing calldata), so the transfer is unchanged, and the chain itself then says
 * which payout a transfer is (see {@link reconcilePayoutsWithChain}). `amount`: integer USDC base units.
 */
export function payoutTransferData(to: Hex, amount: bigint, payoutId: string, providerId: string): Hex {
  return concatHex([encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] }), stringToHex(`acg-payout:${payoutId}:${providerId}`)]);
}

/** The payout a transaction's calldata is tagged with ({@link payoutTransferData}), or undefined. */
export function payoutTagOf(input: Hex): { payout_id: string; provider_id: string } | undefined {
  if (size(input) <= TRANSFER_CALL_BYTES) return undefined;
  const tag = TAG.exec(bytesToString(hexToBytes(sliceHex(input, TRANSFER_CALL_BYTES))));
  return tag ? { payout_id: tag[1], provider_id: tag[2] } : undefined;
}

/** What {@link reconcilePayoutsWithChain} did. */
export interface PayoutChainReport {
  /** payouts found on chain that Redis did not know as sent (reserved, lost or `failed`): now `sent` */
  adopted: string[];
  /** payouts recorded `sent` whose transfer was not on chain: sent again (the same signed transaction, or re-signed once its nonce was taken) */
  resent: string[];
  /**
   * providers with a payout on chain that could not be recorded (their available balance was below
   * it), now or earlier: no payout is reserved for them until an operator settles it and removes
   * them from the set `providerPayoutsBlocked`
   */
  blocked: string[];
}

/** What {@link reconcilePayoutsWithChain} needs (the payout pass's options). */
export interface PayoutChainOptions {
  ledger: ProviderLedger;
  redis: Redis;
  keys: RedisKeys;
  sender: TreasurySender;
  log: Logger;
  /** payouts of each provider looked at for (a), newest first (default 50) */
  recentPayouts?: number;
}

/**
 * Reconciles the provider payouts with the payment chain (issue 33; docs/operating.md
 * "Reconciliation from the chain"), run by each payout pass before it reserves or sends anything:
 *
 * (a) chain → Redis: the treasury's USDC `Transfer` logs from the pass's chain cursor (none: the
 * head − {@link PAYOUT_CHAIN_LOOKBACK_BLOCKS}) to the head; a transfer whose calldata carries a
 * payout tag is that payout (`ProviderLedger.adoptPayout`): recorded `sent` if Redis lost it or
 * left it `reserved` (e.g. Redis restarted without its last writes, or lost the signed transaction),
 * so the next pass never pays it twice; one that cannot be recorded blocks that provider's payouts
 * (kept in the Redis set `pl:{pl}:payouts-blocked` until an operator removes it; an error log
 * line with `alert: "payout_chain_undecided"`). The cursor moves after
 * each chunk of 2 000 blocks; a rescan changes nothing.
 *
 * (b) Redis → chain: each provider's recent payouts recorded `sent` and not final are looked up on
 * chain; one with no receipt is sent again through its own record (`TreasurySender.transferOnce`:
 * the same signed transaction while its nonce is free, else re-signed, once), and every such payout
 * is tracked until final (`trackTreasuryTransfer`, idempotent), so a payout whose tracking was lost
 * is watched again.
 *
 * @throws RPC or Redis failures (the pass logs them; the next pass resumes from the cursor).
 */
export async function reconcilePayoutsWithChain(o: PayoutChainOptions): Promise<PayoutChainReport> {
  const report: PayoutChainReport = { adopted: [], resent: [], blocked: [] };
  const { sender, ledger, redis, keys } = o;
  const client = sender.publicClient;
  const stateKey = providerLedgerKeys.providerPayoutPass(keys, 'state');
  const head = await client.getBlockNumber({ cacheTime: 0 });
  const stored = await redis.hget(stateKey, 'chain_cursor');
  const lookback = head - BigInt(PAYOUT_CHAIN_LOOKBACK_BLOCKS);
  let from = stored !== null ? BigInt(stored) + 1n : lookback > 0n ? lookback : 0n;
  while (from <= head) {
    const to = from + CHUNK_BLOCKS - 1n < head ? from + CHUNK_BLOCKS - 1n : head;
    const logs = await client.getLogs({ address: sender.asset, event: TRANSFER, args: { from: sender.address }, fromBlock: from, toBlock: to });
    for (const log of logs) {
      const tx = await client.getTransaction({ hash: log.transactionHash });
      const tag = tx.to?.toLowerCase() === sender.asset.toLowerCase() ? payoutTagOf(tx.input) : undefined;
      if (!tag) continue; // a refund, or a transfer that is not a payout
      const address = log.args.to as Hex;
      const amount = log.args.value as bigint;
      const r = await ledger.adoptPayout({ ...tag, address, amount, tx_hash: log.transactionHash });
      if (r === 'short') {
        await redis.sadd(providerLedgerKeys.providerPayoutsBlocked(keys), tag.provider_id);
        o.log.error(
          { alert: 'payout_chain_undecided', ...tag, amount: amount.toString(), tx_hash: log.transactionHash },
          "a payout on chain is unknown to the ledger and the provider's available balance is below it: its payouts wait for an operator",
        );
        continue;
      }
      if (r !== 'known') {
        report.adopted.push(tag.payout_id);
        o.log.warn({ ...tag, amount: amount.toString(), tx_hash: log.transactionHash, was: r }, 'a payout on chain was not recorded as sent; recorded now');
      }
      await track(o, tag.payout_id, tag.provider_id, address, amount, log.transactionHash);
    }
    await redis.hset(stateKey, 'chain_cursor', String(to));
    from = to + 1n;
  }
  report.blocked = await redis.smembers(providerLedgerKeys.providerPayoutsBlocked(keys));
  for (const providerId of await ledger.providers()) {
    for (const payout of await ledger.payouts(providerId, o.recentPayouts ?? 50)) {
      if (payout.status !== 'sent' || payout.finality === 'final') continue;
      const record = await ledger.payout(payout.payout_id);
      if (!record?.tx_hash) continue;
      let hash = record.tx_hash;
      if (!(await receiptOf(client, hash))) {
        const data = payoutTransferData(record.address, record.amount, record.payout_id, providerId);
        const sent = await sender.transferOnce({ to: record.address, amount: record.amount, record: ledger.payoutTransferRecord(record.payout_id), data });
        if (sent.status !== 'success') {
          o.log.error({ payout_id: record.payout_id, tx_hash: sent.hash }, 'a payout sent again reverted; for an operator');
          continue;
        }
        hash = sent.hash;
        await redis.hset(ledger.payoutKey(record.payout_id), 'tx_hash', hash);
        report.resent.push(record.payout_id);
        o.log.warn({ payout_id: record.payout_id, was: record.tx_hash, tx_hash: hash }, 'a payout recorded sent was not on chain; sent again');
      }
      await track(o, record.payout_id, providerId, record.address, record.amount, hash);
    }
  }
  return report;
}

/** Tracks a payout's transfer until final (idempotent: an existing tracking is kept). */
function track(o: PayoutChainOptions, payoutId: string, providerId: string, to: Hex, amount: bigint, txHash: Hex): Promise<void> {
  return trackTreasuryTransfer(o.redis, o.keys, {
    kind: 'payout',
    id: payoutId,
    txHash,
    to,
    amount: amount.toString(),
    recordKey: o.ledger.payoutKey(payoutId),
    data: payoutTransferData(to, amount, payoutId, providerId),
  });
}
