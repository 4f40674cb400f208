import { createHash } from 'node:crypto';
import type { RedisKeys } from '@acg/redis';
import type { Cluster, Redis } from 'ioredis';
import { BaseError, decodeFunctionData, isAddressEqual, parseAbiItem, TransactionReceiptNotFoundError, type Hex } from 'viem';
import { PERMIT2_ADDRESS, x402UptoPermit2ProxyABI, x402UptoPermit2ProxyAddress } from '@x402/evm';
import { permit2NonceHex, uptoPermit2Authorization } from '@acg/payments';
import { paymentKeys, reserveAuthorization } from '@acg/payments/commands';
import {
  AUTHORIZATION_USED,
  readRefund,
  refundsOnChain,
  refundTransferData,
  refundTransferRecord,
  settlementState,
  trackTreasuryTransfer,
  treasuryKeys,
} from '@acg/treasury';
import { recoverPayment, type PaymentRecoveryOptions, type RecoveryOutcome } from './recovery.js';
import { reconciliationKeys } from './commands/keys.js';
import { reconcileChannels } from './channelReconciliation.js';

/** ERC-20 `Transfer` (USDC emits it next to EIP-3009 `AuthorizationUsed`). */
const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

import {
  DEFAULT_RECONCILE_CONFIRMATIONS,
  type ChainReconciliationOptions,
  type ChainReconciliationReport,
  type ChainReconciliationRun,
  type ReconciliationCounts,
  type ReconciliationOutcome,
} from './chainReconciliationOptions.js';

/**
 * One payment into the treasury as the chain shows it: an EIP-3009 authorization used (`exact`), or an
 * x402 `upto` settlement through the upto proxy (Permit2 nonce), and its USDC transfer.
 */
export interface ChainPayment {
  payer: `0x${string}`;
  /** the EIP-3009 nonce (`exact`), or the Permit2 nonce as 0x + 64 hex (`upto`, `permit2NonceHex`) */
  nonce: `0x${string}`;
  /** integer string, USDC base units: what the transfer moved */
  amount: string;
  txHash: `0x${string}`;
  blockNumber: bigint;
  /** `exact` when absent */
  scheme?: 'exact' | 'upto';
  /** `upto`: the ceiling the payer signed (`permit.permitted.amount`), integer string, base units */
  ceiling?: string;
}

/** Operation ids of payments the reconciliation found without a reservation: `rcn_` + 32 hex of sha256(reservation key). Deterministic, so a refund is queued once. */
export function reconciledOperationId(authKey: string): string {
  return `rcn_${createHash('sha256').update(authKey).digest('hex').slice(0, 32)}`;
}

/** How long the paywall keeps reservations, seconds (its default). */
const RETENTION_SECONDS = 7 * 24 * 3600;

const reportKey = (keys: RedisKeys) => reconciliationKeys.chainReconciliationReport(keys);

/**
 * The payments into the treasury in blocks `[fromBlock, toBlock]`: each `AuthorizationUsed` log of
 * the asset paired with the `Transfer` log of the same transaction from the authorizer to the
 * treasury. An authorization paying someone else is not the gateway's and is left out.
 */
export async function paymentsToTreasury(o: ChainReconciliationOptions, fromBlock: bigint, toBlock: bigint): Promise<ChainPayment[]> {
  const [used, transfers] = await Promise.all([
    o.publicClient.getLogs({ address: o.asset, event: AUTHORIZATION_USED, fromBlock, toBlock }),
    o.publicClient.getLogs({ address: o.asset, event: TRANSFER, args: { to: o.treasury }, fromBlock, toBlock }),
  ]);
  const payments: ChainPayment[] = [];
  for (const log of used) {
    const payer = log.args.authorizer!;
    const transfer = transfers.find((t) => t.transactionHash === log.transactionHash && t.args.from?.toLowerCase() === payer.toLowerCase());
    if (!transfer) continue;
    payments.push({ payer, nonce: log.args.nonce!, amount: String(transfer.args.value), txHash: log.transactionHash, blockNumber: log.blockNumber });
  }
  return payments;
}

/** The field of an `upto` reservation that records its settlement was found on chain (`<tx hash>:<block>`), so {@link reconcileUptoRecords} skips it. */
const CHAIN_CHECK = 'chain_check';

const UPTO_SETTLED_EVENTS = x402UptoPermit2ProxyABI.filter((item) => item.type === 'event');

/** What a call of the upto proxy settled, decoded with the official ABI (`x402UptoPermit2ProxyABI` of `@x402/evm`); undefined for any other call. */
function decodeUptoSettle(
  input: Hex,
): { owner: `0x${string}`; to: `0x${string}`; token: `0x${string}`; nonce: bigint; ceiling: bigint; amount: bigint } | undefined {
  try {
    const call = decodeFunctionData({ abi: x402UptoPermit2ProxyABI, data: input });
    if (call.functionName !== 'settle' && call.functionName !== 'settleWithPermit') return undefined;
    const [permit, amount, owner, witness] = (call.functionName === 'settle' ? call.args : call.args.slice(1)) as unknown as [
      { permitted: { token: `0x${string}`; amount: bigint }; nonce: bigint },
      bigint,
      `0x${string}`,
      { to: `0x${string}` },
    ];
    return { owner, to: witness.to, token: permit.permitted.token, nonce: permit.nonce, ceiling: permit.permitted.amount, amount };
  } catch {
    return undefined;
  }
}

/**
 * The x402 `upto` settlements into the treasury in blocks `[fromBlock, toBlock]`: each transaction in
 * which the upto proxy logged `Settled` or `SettledWithPermit` (the official interface: the events
 * carry no arguments), its `settle`/`settleWithPermit` call decoded with the official ABI (owner,
 * Permit2 nonce, signed ceiling, amount, `witness.to`), kept when it pays the treasury in the asset
 * and paired with the USDC `Transfer` of the same transaction from the owner to the treasury (the
 * amount that moved; a transaction without one is not read, so only settlements into the treasury
 * cost a transaction lookup). A settlement sent through another contract (its call is not the proxy's) is
 * logged and left out.
 */
export async function uptoSettlementsToTreasury(o: ChainReconciliationOptions, fromBlock: bigint, toBlock: bigint): Promise<ChainPayment[]> {
  const proxy = o.uptoProxy ?? x402UptoPermit2ProxyAddress;
  const settled = await o.publicClient.getLogs({ address: proxy, events: UPTO_SETTLED_EVENTS, fromBlock, toBlock });
  if (settled.length === 0) return [];
  const transfers = await o.publicClient.getLogs({ address: o.asset, event: TRANSFER, args: { to: o.treasury }, fromBlock, toBlock });
  // only transactions that also paid the treasury are read (the proxy is shared: most of its settlements pay others)
  const paidTreasury = new Set(transfers.map((t) => t.transactionHash));
  const payments: ChainPayment[] = [];
  for (const txHash of new Set(settled.map((l) => l.transactionHash))) {
    if (!paidTreasury.has(txHash)) continue;
    const log = settled.find((l) => l.transactionHash === txHash)!;
    const tx = await o.publicClient.getTransaction({ hash: txHash });
    const s = tx.to && isAddressEqual(tx.to, proxy) ? decodeUptoSettle(tx.input) : undefined;
    if (!s) {
      o.log.warn({ tx_hash: txHash }, 'an upto settlement not sent to the proxy directly: not read from the logs');
      continue;
    }
    if (!isAddressEqual(s.to, o.treasury) || !isAddressEqual(s.token, o.asset)) continue;
    const transfer = transfers.find((t) => t.transactionHash === txHash && t.args.from !== undefined && isAddressEqual(t.args.from, s.owner));
    if (!transfer) continue; // the treasury was paid by someone else in this transaction: not this settlement
    payments.push({
      payer: s.owner,
      nonce: permit2NonceHex(String(s.nonce)),
      amount: String(transfer.args.value),
      txHash,
      blockNumber: log.blockNumber,
      scheme: 'upto',
      ceiling: String(s.ceiling),
    });
  }
  return payments;
}

/**
 * The `upto` reservations that say a settlement was made (`settled`/`completed` with a charge above 0
 * and a `tx_hash`) but that no run found on chain yet ({@link reconcilePayment} marks those it matched):
 * each one's transaction is looked up: mined at or below `toBlock` and its decoded `settle` call moving
 * the recorded charge from the payer's Permit2 nonce to the treasury → matched; not mined, reverted, or
 * another payment: while the finality tracker still tracks it (`settlementState` `settled`: a reorg, its
 * signed transaction being broadcast again) left to it; marked `unpaid` by the tracker → matched (the
 * record says nothing was charged); otherwise undecided (a record without its settlement: a forged or
 * corrupted record), once; mined above `toBlock`, or younger than `olderThanMs`
 * (default 10 minutes: the finality tracker's): left for a later run, not counted. A SCAN of the
 * deployment's `upto` reservation keys (on every master of a Redis Cluster).
 */
export async function reconcileUptoRecords(o: ChainReconciliationOptions, toBlock: bigint): Promise<ReconciliationCounts> {
  const counts = zero();
  const proxy = o.uptoProxy ?? x402UptoPermit2ProxyAddress;
  const match = `${paymentKeys.authorization(o.keys, o.network, PERMIT2_ADDRESS, '', '').replace(/::$/, '')}:*`;
  const cutoff = Date.now() - (o.olderThanMs ?? 600_000);
  // every master of a Redis Cluster in turn (a Cluster client's own SCAN reaches one node)
  const nodes: Redis[] = o.redis.isCluster ? (o.redis as unknown as Cluster).nodes('master') : [o.redis];
  const authKeys: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', match, 'COUNT', 500);
      cursor = next;
      authKeys.push(...found);
    } while (cursor !== '0');
  }
  for (const authKey of authKeys) {
    const h = await o.redis.hgetall(authKey);
    if (h.scheme !== 'upto' || h[CHAIN_CHECK] || (h.state !== 'settled' && h.state !== 'completed')) continue;
    if (!h.amount || h.amount === '0' || !h.tx_hash || h.tx_hash === '0x') continue;
    if (Number(h.updated_at ?? 0) > cutoff) continue;
    const txHash = h.tx_hash as Hex;
    let reason: string | undefined;
    let missing = false;
    try {
      const receipt = await o.publicClient.getTransactionReceipt({ hash: txHash });
      if (receipt.blockNumber > toBlock) continue;
      const s = receipt.status === 'success' ? decodeUptoSettle((await o.publicClient.getTransaction({ hash: txHash })).input) : undefined;
      const ours =
        s &&
        receipt.to &&
        isAddressEqual(receipt.to, proxy) &&
        isAddressEqual(s.owner, h.payer as `0x${string}`) &&
        permit2NonceHex(String(s.nonce)) === h.nonce &&
        isAddressEqual(s.to, o.treasury) &&
        String(s.amount) === h.amount;
      if (ours) {
        await o.redis.hset(authKey, CHAIN_CHECK, `${txHash}:${receipt.blockNumber}`);
        counts.matched++;
        continue;
      }
      reason = receipt.status === 'success' ? `its settlement ${txHash} is not a settlement of this payment and charge` : `its settlement ${txHash} reverted`;
    } catch (e) {
      const notFound = e instanceof TransactionReceiptNotFoundError || (e instanceof BaseError && e.walk((x) => x instanceof TransactionReceiptNotFoundError));
      if (!notFound) throw e;
      reason = `its settlement ${txHash} is not on chain`;
      missing = true;
    }
    // a settlement reorged out is the finality tracker's while it tracks it (the facilitator's signed
    // transaction is broadcast again); once it gave up (`unpaid`: the permit expired) the record says so
    const tracked = missing && h.operation_id ? await settlementState(o.redis, o.keys, h.operation_id) : undefined;
    if (tracked?.status === 'settled') continue;
    if (tracked?.status === 'unpaid') {
      await o.redis.hset(authKey, CHAIN_CHECK, 'unpaid');
      counts.matched++;
      continue;
    }
    o.log.error(
      {
        alert: 'chain_reconciliation_undecided',
        reason: `an upto reservation records a settlement, but ${reason}`,
        operationId: h.operation_id,
        payer: h.payer,
        nonce: h.nonce,
        tx_hash: txHash,
        amount: h.amount,
      },
      'chain reconciliation cannot decide a payment; an operator must',
    );
    await o.redis.hset(authKey, CHAIN_CHECK, 'undecided');
    counts.undecided++;
  }
  return counts;
}

/**
 * Checks one payment against the records and repairs what it can (idempotent: every step is a
 * compare-and-set or keyed by the operation id, so a run interrupted anywhere is finished by the next):
 * - no reservation (lost, or the authorization was submitted by someone else): within the
 *   retention window it is recreated for the operation {@link reconciledOperationId} and recovered
 *   as the crash-recovery sweep would (`recoverPayment`): nothing ran, so the payer is refunded and
 *   the stored answer names the refund (a resend of the payment runs nothing: the reservation holds
 *   it, and its unknown payload hash refuses it as a used nonce); refunds of it already on chain
 *   (tagged, `refundTag.ts`; their records may have been lost with the reservation) get their
 *   records back and only the rest is refunded; older: undecided;
 * - a reservation in flight: the crash-recovery sweep's (deferred), unless this reconciliation
 *   created it (then it is recovered now);
 * - completed: its refund, when its answer names one, is queued if missing and re-sent if recorded
 *   `sent` but not on chain; the provider credit of a finished operation is restored if missing;
 * - x402 `upto` (`p.scheme`): keyed by (Permit2, payer, nonce); a recreated reservation names the
 *   settlement; the reservation's charge and signed ceiling, and the execution record's payment
 *   (`executionPayment`), must be the settlement's, else undecided.
 */
export async function reconcilePayment(o: ChainReconciliationOptions, p: ChainPayment): Promise<ReconciliationOutcome> {
  const upto = p.scheme === 'upto';
  const authKey = paymentKeys.authorization(o.keys, o.network, upto ? PERMIT2_ADDRESS : o.asset, p.payer, p.nonce);
  const undecided = (reason: string, operationId?: string): ReconciliationOutcome => {
    o.log.error(
      { alert: 'chain_reconciliation_undecided', reason, operationId, payer: p.payer, nonce: p.nonce, tx_hash: p.txHash, amount: p.amount },
      'chain reconciliation cannot decide a payment; an operator must',
    );
    return 'undecided';
  };
  const h = await o.redis.hgetall(authKey);
  if (!h.state) {
    const op = reconciledOperationId(authKey);
    if (await readRefund(o.redis, o.keys, op)) return checkRefund(o, op, undecided);
    const block = await o.publicClient.getBlock({ blockNumber: p.blockNumber });
    if (Number(block.timestamp) * 1000 < Date.now() - (o.retentionSeconds ?? RETENTION_SECONDS) * 1000) {
      return undecided('no reservation, and the payment is older than the reservations are kept');
    }
    const reserved = await reserveAuthorization(o.redis, {
      authKey,
      inFlightKey: paymentKeys.authorizationsInFlight(o.keys),
      requestHash: 'chain-reconciliation',
      payloadHash: 'chain-reconciliation',
      operationId: op,
      nowMs: Date.now(),
      retentionSeconds: o.retentionSeconds ?? RETENTION_SECONDS,
      asset: o.asset,
      from: p.payer,
      nonce: p.nonce,
      amount: p.amount,
      ...(upto ? { scheme: 'upto' } : {}),
    });
    // a request reserved it meanwhile (a resend of the payment): that request, or the sweep, answers it
    if (!reserved.reserved && reserved.existing.operationId !== op) return 'deferred';
    // an `upto` settlement is known from the proxy's call: the refund names it (Permit2 logs no event to find it by)
    if (upto) await o.redis.hset(authKey, 'tx_hash', p.txHash, CHAIN_CHECK, `${p.txHash}:${p.blockNumber}`);
    o.log.warn({ operationId: op, payer: p.payer, tx_hash: p.txHash }, 'a settled payment has no reservation: recovering it');
    // refunds of it already on chain (tagged, refundTag.ts; their records lost with the reservation):
    // their records are restored, and only what they did not give back is refunded
    const refunded = await restoreRefundsOnChain(o, p);
    if (refunded === 0n) return recovered(await recoverPayment(o, authKey), undecided);
    const rest = BigInt(p.amount) - refunded;
    const refunds: ChainReconciliationOptions['refunds'] = {
      enqueue: async (r) => {
        if (rest > 0n) return o.refunds.enqueue({ ...r, amount: String(rest) });
        // nothing left to give back: the record says so, so no later run queues the stored answer's refund
        await o.redis.hsetnx(treasuryKeys.refund(o.keys, r.operationId), 'status', 'sent');
        await o.redis.hset(treasuryKeys.refund(o.keys, r.operationId), 'amount', '0', 'payer', r.payer, 'payment_tx_hash', r.paymentTxHash);
      },
    };
    return recovered(await recoverPayment({ ...o, refunds }, authKey), undecided);
  }
  const op = h.operation_id;
  if (upto) {
    const mismatch = uptoMismatch(h, p);
    if (mismatch) {
      // reported here: the record pass (reconcileUptoRecords) does not report it a second time
      await o.redis.hset(authKey, CHAIN_CHECK, 'undecided');
      return undecided(mismatch, op);
    }
  } else if (h.amount && h.amount !== p.amount) return undecided(`the reservation's amount ${h.amount} is not the amount transferred`, op);
  if (h.state !== 'completed') {
    if (op.startsWith('rcn_')) return recovered(await recoverPayment(o, authKey), undecided);
    return 'deferred';
  }
  if (upto && o.executionPayment) {
    const recorded = await o.executionPayment(op);
    if (recorded && (recorded.amount !== p.amount || (recorded.tx_hash ?? '').toLowerCase() !== p.txHash.toLowerCase())) {
      await o.redis.hset(authKey, CHAIN_CHECK, 'undecided');
      return undecided(
        `the execution record's payment ${recorded.amount} in ${recorded.tx_hash} is not the amount settled ${p.amount} in this transaction`,
        op,
      );
    }
  }
  const outcomes: ReconciliationOutcome[] = [await ensureRefund(o, op, p, h.response, undecided)];
  if (o.restoreCredit) outcomes.push(await o.restoreCredit(op));
  const outcome = worst(outcomes);
  // the record pass (reconcileUptoRecords) need not look this settlement up again
  if (upto && outcome !== 'undecided') await o.redis.hset(authKey, CHAIN_CHECK, `${p.txHash}:${p.blockNumber}`);
  return outcome;
}

/**
 * How an `upto` reservation `h` disagrees with the settlement `p` the chain shows, or undefined: the
 * transaction it names is another; the charge it recorded (`amount` once settled, `settle_amount` while
 * settling) is not what moved; while still `pending` (its ceiling in `amount`) more moved than the
 * ceiling; the ceiling of its signed payload is not the one settled against.
 */
function uptoMismatch(h: Record<string, string>, p: ChainPayment): string | undefined {
  if (h.tx_hash && h.tx_hash !== '0x' && h.tx_hash.toLowerCase() !== p.txHash.toLowerCase())
    return `the reservation names settlement ${h.tx_hash}, not this one`;
  let ceiling: string | undefined;
  try {
    ceiling = h.payload ? uptoPermit2Authorization(JSON.parse(h.payload))?.authorization.permitted.amount : undefined;
  } catch {
    return 'the reservation holds a payload that is not JSON';
  }
  if (ceiling !== undefined && p.ceiling !== undefined && ceiling !== p.ceiling)
    return `the signed ceiling ${ceiling} is not the ceiling settled against (${p.ceiling})`;
  if (p.ceiling !== undefined && BigInt(p.amount) > BigInt(p.ceiling)) return `the settlement ${p.amount} is above its ceiling ${p.ceiling}`;
  if (h.state === 'pending') {
    if (h.amount && BigInt(p.amount) > BigInt(h.amount)) return `the settlement ${p.amount} is above the reserved ceiling ${h.amount}`;
    return undefined;
  }
  const charge = h.state === 'settling' || h.state === 'settle_unknown' ? (h.settle_amount ?? h.amount) : h.amount;
  if (charge !== p.amount) return `the reservation's charge ${charge} is not the amount settled ${p.amount}`;
  return undefined;
}

/**
 * The tagged refunds of payment `p` on chain (`refundsOnChain`): each whose record is missing gets
 * it back (`sent`, with its transaction), as the refund worker had written it. Returns the total
 * they gave back (USDC base units).
 */
async function restoreRefundsOnChain(o: ChainReconciliationOptions, p: ChainPayment): Promise<bigint> {
  const found = await refundsOnChain(o.publicClient, {
    asset: o.asset,
    treasury: o.treasury,
    payer: p.payer,
    paymentTxHash: p.txHash,
    fromBlock: p.blockNumber,
  });
  let total = 0n;
  for (const f of found) {
    total += f.amount;
    const key = treasuryKeys.refund(o.keys, f.tag.operationId);
    const h = await o.redis.hgetall(key);
    if (h.status === 'sent' && h.tx_hash) continue;
    await o.redis.hset(key, {
      status: 'sent',
      amount: String(f.amount),
      payer: p.payer,
      payment_tx_hash: p.txHash,
      tx_hash: f.txHash,
      sent_at: new Date().toISOString(),
    });
    // watched until final like any refund (re-sent if a reorg takes it off the chain)
    await trackTreasuryTransfer(o.redis, o.keys, {
      kind: 'refund',
      id: f.tag.operationId,
      txHash: f.txHash,
      to: p.payer,
      amount: String(f.amount),
      recordKey: key,
    });
    o.log.warn({ operationId: f.tag.operationId, tx_hash: f.txHash, amount: String(f.amount) }, 'restored the record of a refund found on chain');
  }
  return total;
}

function recovered(r: RecoveryOutcome, undecided: (reason: string) => ReconciliationOutcome): ReconciliationOutcome {
  if (r.outcome === 'refunded' || r.outcome === 'completed') return 'repaired';
  return undecided(r.outcome === 'released' ? 'the authorization is used on chain but its state reads unused' : 'the payment could not be recovered now');
}

/** The refund a completed payment's answer names: queued if its record was lost, checked on chain once sent. */
async function ensureRefund(
  o: ChainReconciliationOptions,
  op: string,
  p: ChainPayment,
  response: string | undefined,
  undecided: (reason: string, operationId?: string) => ReconciliationOutcome,
): Promise<ReconciliationOutcome> {
  if (await readRefund(o.redis, o.keys, op)) return checkRefund(o, op, undecided);
  let named: { amount?: unknown } | undefined;
  try {
    named = (JSON.parse(response ?? 'null') as { body?: { refund?: { amount?: unknown } } } | null)?.body?.refund;
  } catch {
    return undecided('the stored answer is not JSON', op);
  }
  if (!named) return 'matched';
  if (typeof named.amount !== 'string' || !/^[0-9]+$/.test(named.amount)) return undecided('the stored answer names a refund without an amount', op);
  await o.refunds.enqueue({ operationId: op, payer: p.payer, amount: named.amount, paymentTxHash: p.txHash });
  o.log.warn({ operationId: op, payer: p.payer, amount: named.amount }, 'queued a refund whose record was lost');
  return 'repaired';
}

/** A refund recorded `sent` must be on chain: a transaction the node has no receipt for is re-sent through the treasury sender. */
async function checkRefund(
  o: ChainReconciliationOptions,
  op: string,
  undecided: (reason: string, operationId?: string) => ReconciliationOutcome,
): Promise<ReconciliationOutcome> {
  const refund = await readRefund(o.redis, o.keys, op);
  if (refund?.status !== 'sent' || !refund.tx_hash) return 'matched'; // pending: the refund worker's
  try {
    const receipt = await o.publicClient.getTransactionReceipt({ hash: refund.tx_hash as `0x${string}` });
    if (receipt.status === 'success') return 'matched';
  } catch (e) {
    const notFound = e instanceof TransactionReceiptNotFoundError || (e instanceof BaseError && e.walk((x) => x instanceof TransactionReceiptNotFoundError));
    if (!notFound) throw e;
  }
  if (!o.sender) return undecided(`refund ${refund.tx_hash} is recorded sent but is not on chain, and no treasury sender is configured`, op);
  const paymentTxHash = (await o.redis.hget(treasuryKeys.refund(o.keys, op), 'payment_tx_hash')) as `0x${string}` | null;
  const sent = await o.sender.transferOnce({
    to: refund.payer as `0x${string}`,
    amount: BigInt(refund.amount),
    record: refundTransferRecord(o.redis, o.keys, op),
    ...(paymentTxHash ? { data: refundTransferData({ payer: refund.payer as `0x${string}`, amount: refund.amount, paymentTxHash, operationId: op }) } : {}),
  });
  if (sent.status !== 'success') return undecided(`re-sent refund ${sent.hash} reverted`, op);
  await o.redis.hset(treasuryKeys.refund(o.keys, op), 'status', 'sent', 'tx_hash', sent.hash, 'sent_at', new Date().toISOString());
  // watched until final again (its tracking may have been lost with the rest; idempotent)
  await trackTreasuryTransfer(o.redis, o.keys, {
    kind: 'refund',
    id: op,
    txHash: sent.hash,
    to: refund.payer as `0x${string}`,
    amount: refund.amount,
    recordKey: treasuryKeys.refund(o.keys, op),
  });
  o.log.warn({ operationId: op, tx_hash: sent.hash, vanished: refund.tx_hash }, 're-sent a refund that was recorded sent but was not on chain');
  return 'repaired';
}

const SEVERITY: ReconciliationOutcome[] = ['matched', 'deferred', 'repaired', 'undecided'];
const worst = (all: ReconciliationOutcome[]) => all.reduce((a, b) => (SEVERITY.indexOf(b) > SEVERITY.indexOf(a) ? b : a), 'matched');

const zero = (): ReconciliationCounts => ({ matched: 0, repaired: 0, deferred: 0, undecided: 0 });

/**
 * Reconciles the payments of blocks `[fromBlock, toBlock]` ({@link reconcilePayment} each), in
 * chunks of `chunkBlocks`; `afterChunk` runs after each (the scheduled run moves its cursor there).
 * Counts are added to the stored report. What an operator's `reconcile` command runs.
 */
export async function reconcileBlocks(
  o: ChainReconciliationOptions,
  fromBlock: bigint,
  toBlock: bigint,
  afterChunk?: (lastBlock: bigint) => Promise<void>,
): Promise<ReconciliationCounts> {
  const counts = zero();
  const chunk = BigInt(o.chunkBlocks ?? 2_000);
  for (let start = fromBlock; start <= toBlock; start += chunk) {
    const end = start + chunk - 1n < toBlock ? start + chunk - 1n : toBlock;
    const found = zero();
    const payments = [...(await paymentsToTreasury(o, start, end)), ...(await uptoSettlementsToTreasury(o, start, end))];
    for (const payment of payments) found[await reconcilePayment(o, payment)]++;
    for (const [k, n] of Object.entries(await reconcileChannels(o, start, end))) found[k as ReconciliationOutcome] += n;
    const multi = o.redis.multi();
    for (const [k, n] of Object.entries(found)) if (n) multi.hincrby(reportKey(o.keys), k, n);
    await multi.exec();
    for (const [k, n] of Object.entries(found)) counts[k as ReconciliationOutcome] += n;
    await afterChunk?.(end);
  }
  // records of upto settlements no log of a range matched: each checked once against its transaction
  const records = await reconcileUptoRecords(o, toBlock);
  const multi = o.redis.multi();
  for (const [k, n] of Object.entries(records)) if (n) multi.hincrby(reportKey(o.keys), k, n);
  await multi.exec();
  for (const [k, n] of Object.entries(records)) counts[k as ReconciliationOutcome] += n;
  return counts;
}

/**
 * The scheduled run: from the block after the stored cursor (none: `lookbackBlocks` below the
 * confirmed block) up to the confirmed block (head − `confirmations`), moving the cursor after each
 * chunk, so a run that crashes resumes where it stopped. Returns this run's counts and the cursor.
 */
export async function runChainReconciliation(o: ChainReconciliationOptions): Promise<ChainReconciliationRun> {
  const key = reportKey(o.keys);
  const head = await o.publicClient.getBlockNumber({ cacheTime: 0 });
  const confirmed = head - BigInt(o.confirmations ?? DEFAULT_RECONCILE_CONFIRMATIONS);
  const stored = await o.redis.hget(key, 'cursor');
  const start = stored !== null ? BigInt(stored) + 1n : confirmed - BigInt(o.lookbackBlocks ?? 0);
  const from = start > 0n ? start : 0n;
  let counts = zero();
  if (confirmed >= from) counts = await reconcileBlocks(o, from, confirmed, async (last) => void (await o.redis.hset(key, 'cursor', String(last))));
  await o.redis.hset(key, 'last_run_at', new Date().toISOString());
  const cursor = await o.redis.hget(key, 'cursor');
  return { ...counts, cursor_block: cursor === null ? null : Number(cursor) };
}

/** The stored report: cumulated counts, the cursor and the last run; counts are 0 and the rest null before a first run. */
export async function readChainReconciliationReport(redis: PaymentRecoveryOptions['redis'], keys: RedisKeys): Promise<ChainReconciliationReport> {
  const h = await redis.hgetall(reportKey(keys));
  const n = (v: string | undefined) => Number(v ?? 0);
  return {
    matched: n(h.matched),
    repaired: n(h.repaired),
    deferred: n(h.deferred),
    undecided: n(h.undecided),
    cursor_block: h.cursor !== undefined ? Number(h.cursor) : null,
    last_run_at: h.last_run_at ?? null,
  };
}
