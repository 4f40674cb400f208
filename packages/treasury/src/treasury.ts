import { randomUUID } from 'node:crypto';
import { releaseLease, takeLease, type RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import {
  BaseError,
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  erc20Abi,
  http,
  keccak256,
  parseTransaction,
  type Account,
  type Chain,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
} from 'viem';
import { REPLACEMENT_FEE_BUMP_PERCENT } from './chainSender.js';
import { treasuryKeys } from './commands/keys.js';

/**
 * A signed treasury transaction as stored before it is broadcast: raw bytes, hash and nonce, and
 * `replaces`: the hashes of the earlier transactions at the same nonce it replaced with a higher fee
 * (oldest first). Any one of them may still be mined instead, never more than one (one nonce).
 */
export interface SignedTransfer {
  raw: Hex;
  hash: Hex;
  nonce: number;
  replaces?: Hex[];
}

/**
 * Where one transfer keeps its signed transaction (a refund record, a payout record): the durable
 * half of exactly-once. `save` must be durable before it resolves (it runs before the broadcast).
 */
export interface TransferRecord {
  load(): Promise<SignedTransfer | undefined>;
  /** Stores `signed` (with its `replaces`), replacing what the record held. */
  save(signed: SignedTransfer): Promise<void>;
  /**
   * Forgets the signed transaction `hash` (its nonce went to another transaction, or it reverted)
   * so the next attempt signs anew; a no-op when the record holds another transaction by now
   * (compare-and-delete: a stale caller never erases what another process stored).
   */
  clear(hash: Hex): Promise<void>;
}

/** Test hooks of {@link TreasurySender.transferOnce} (crash simulation). */
export interface TransferHooks {
  /** Runs after the signed transaction is stored and before it is broadcast; a throw stops there, as a crash would. */
  afterSign?(signed: SignedTransfer): void | Promise<void>;
}

/** What {@link TreasurySender.transferOnce} sends: `amount` (integer USDC base units) to `to`, once per `record`. */
export interface TransferOnceParams {
  to: `0x${string}`;
  amount: bigint;
  record: TransferRecord;
  hooks?: TransferHooks;
  /**
   * Calldata for the asset contract instead of `transfer(to, amount)`, e.g. an EIP-3009
   * `transferWithAuthorization` resubmitted after a reorg (`finality.ts`); `to` and `amount` then
   * only describe it.
   */
  data?: Hex;
}

/** How a transfer ended on chain: mined with `success`, or mined and `reverted`. */
export interface TransferOutcome {
  hash: Hex;
  status: 'success' | 'reverted';
}

/**
 * A chain read the exactly-once decision needs failed (e.g. a receipt read got a 429 or a 5xx).
 * Nothing was signed or cleared: retry later with the same record (issue 23 item 6).
 */
export class TreasuryReadError extends Error {
  override name = 'TreasuryReadError';
}

/** The transfer would revert (e.g. the treasury lacks USDC): found while preparing, so nothing was signed or sent. */
export class TransferWouldRevertError extends Error {
  override name = 'TransferWouldRevertError';
}

export interface TreasurySenderOptions {
  redis: Redis;
  keys: RedisKeys;
  rpcUrl: string;
  chain: Chain;
  /** The treasury account (TREASURY_PRIVATE_KEY). */
  treasury: Account;
  /** USDC contract address. */
  asset: `0x${string}`;
  /** Lease on the send lock, ms (default 60 000): a sender that dies holding it blocks others this long at most. */
  lockMs?: number;
  /** How long to wait for a receipt, ms (default 60 000). */
  receiptTimeoutMs?: number;
  /** How long to wait, after a broadcast, for the node's pending nonce to move past it before releasing the lock, ms (default 5 000). */
  pendingNonceWaitMs?: number;
  /** Fee bump of a replacement (same nonce), percent of the replaced transaction's fees (default {@link REPLACEMENT_FEE_BUMP_PERCENT}). */
  feeBumpPercent?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Sends USDC transfers from the treasury, exactly once per {@link TransferRecord}, safely from any
 * number of processes (the refund worker and the provider payouts both use it).
 *
 * Nonces: every fresh send takes the Redis lease `treasuryKeys.treasurySendLock(keys, address)` around
 * prepare (nonce = the node's `pending` transaction count) → sign → store → broadcast → wait until
 * the node's pending count has moved past that nonce, then releases it. So two senders never sign
 * the same nonce while both are alive; a sender that dies holding the lease blocks others for at
 * most `lockMs`.
 *
 * Exactly once: the signed transaction is stored in the record before it is broadcast. A later
 * attempt with a stored transaction first looks for its receipt; without one it reads the
 * treasury's mined nonce: not yet past ours → rebroadcast the same bytes (same nonce, same hash:
 * it can only be mined once); past ours and still no receipt (checked again, so a transaction
 * mined meanwhile is not missed, and the node must not know the transaction at all) → that nonce
 * went to another transaction, so ours can never be mined, and only then is a new one signed (under the lock, only into an empty record, and the
 * old one is cleared only if it is still the one checked). At any time a record has at most one
 * signed transaction that can still be mined, even with two attempts on one record at once.
 * Only the node's explicit "not found" answers count as absence: a failed read (timeout, 429, 5xx)
 * throws {@link TreasuryReadError} and the attempt is retried later, never re-signed.
 *
 * Stuck or refused (issue 33 item 4): a stored transaction whose nonce is the next to be mined and
 * that the node refuses to take again (e.g. "replacement transaction underpriced": another
 * transaction holds its nonce in the pool; its fee cap under the base fee), or that is still
 * waiting in the pool when the transfer is attempted again (a receipt wait timed out), is replaced:
 * the same call at the same nonce, fees raised by `feeBumpPercent` over the replaced one's (nodes
 * take a replacement only above their own minimum bump, geth 10 %) and at least the node's current
 * estimate, stored (with the hashes it replaces) before it is broadcast. A refused replacement is
 * replaced again from its own fees next time, so the fee grows until the node takes it: a stuck
 * transfer never wedges. Every hash of the record (the current one and those it replaced) is
 * looked for before the nonce counts as taken by another transaction: whichever of them is mined is
 * the transfer, once.
 */
export class TreasurySender {
  readonly address: `0x${string}`;
  /** the USDC contract it transfers */
  readonly asset: `0x${string}`;
  readonly publicClient: PublicClient;
  private readonly wallet;
  private readonly lockKey: string;

  constructor(private readonly o: TreasurySenderOptions) {
    const transport = http(o.rpcUrl, { retryCount: 1 });
    this.publicClient = createPublicClient({ chain: o.chain, transport, pollingInterval: 250 }) as PublicClient;
    this.wallet = createWalletClient({ account: o.treasury, chain: o.chain, transport });
    this.address = o.treasury.address;
    this.asset = o.asset;
    this.lockKey = treasuryKeys.treasurySendLock(o.keys, o.treasury.address);
  }

  /**
   * Transfers `amount` (integer USDC base units) to `to`, once for this `record`, and waits for the
   * receipt. Idempotent: call it again after any failure or crash with the same record.
   *
   * @returns the mined transaction and its status (`reverted`: the caller decides, e.g. `record.clear(hash)` and retry).
   * @throws {TransferWouldRevertError} nothing was signed: the transfer would revert (e.g. treasury balance too low).
   * @throws {Error} RPC unreachable, lock not obtained, receipt timeout...: retry later with the same record.
   */
  async transferOnce(p: TransferOnceParams): Promise<TransferOutcome> {
    let signed = await p.record.load();
    if (signed) {
      const receipt = await this.receiptOfAny(signed);
      if (receipt) return this.outcome(receipt);
      const mined = await this.publicClient.getTransactionCount({ address: this.address, blockTag: 'latest' });
      if (mined > signed.nonce) {
        const again = await this.receiptOfAny(signed);
        if (again) return this.outcome(again);
        // and the node knows none of them either (a failed read throws: never a reason to re-sign)
        for (const hash of hashesOf(signed))
          if (await this.knownTransaction(hash)) throw new TreasuryReadError(`${hash} is known but has no receipt yet; retry later`);
        // the nonce went to another transaction: ours can never be mined; sign anew
        await p.record.clear(signed.hash);
        signed = undefined;
      } else if (mined === signed.nonce) {
        // next in line: waiting in the pool since the last attempt (stuck), or refused → replaced with a higher fee
        const taken = await this.broadcast(signed.raw).catch(() => 'refused' as const);
        if (taken !== 'sent') signed = await this.replace(p, signed);
      } else {
        // an earlier nonce is still pending (its own record replaces it if stuck): the same bytes again
        await this.broadcast(signed.raw);
      }
    }
    signed ??= await this.signAndSend(p);
    try {
      const receipt = await this.publicClient.waitForTransactionReceipt({ hash: signed.hash, timeout: this.o.receiptTimeoutMs ?? 60_000 });
      return this.outcome(receipt);
    } catch (e) {
      // a transaction this one replaced may be the one mined
      const receipt = await this.receiptOfAny(signed).catch(() => undefined);
      if (receipt) return this.outcome(receipt);
      throw e;
    }
  }

  /**
   * Replaces `signed` (stuck or refused, its nonce still free): the same call at the same nonce with
   * fees bumped over its own, signed and stored under the send lock (only if the record still holds
   * `signed`), then broadcast. A refused broadcast leaves the replacement stored: the next attempt
   * bumps from it. Returns what the record holds now.
   */
  private replace(p: TransferOnceParams, signed: SignedTransfer): Promise<SignedTransfer> {
    return this.withSendLock(async () => {
      const stored = await p.record.load();
      if (stored?.hash !== signed.hash) return stored ?? signed; // another attempt replaced it meanwhile
      if (await this.receiptOfAny(signed)) return signed; // mined just now: nothing to replace
      const previous = parseTransaction(signed.raw);
      const estimate = await this.publicClient.estimateFeesPerGas().catch(() => undefined);
      const fees = bumpedFees(previous, estimate, this.o.feeBumpPercent ?? REPLACEMENT_FEE_BUMP_PERCENT);
      const request = await this.wallet
        .prepareTransactionRequest({
          to: this.o.asset,
          data: p.data ?? encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [p.to, p.amount] }),
          nonce: signed.nonce,
          gas: previous.gas,
          ...fees,
          chain: this.o.chain,
          account: this.o.treasury,
        })
        .catch(() => {
          throw new Error('could not prepare the replacement of a stuck treasury transfer');
        });
      const raw = await this.wallet.signTransaction(request as never);
      const replacement: SignedTransfer = { raw, hash: keccak256(raw), nonce: signed.nonce, replaces: [...(signed.replaces ?? []), signed.hash] };
      await p.record.save(replacement);
      await this.broadcast(raw).catch(() => undefined); // refused: the next attempt bumps again from this one
      return replacement;
    });
  }

  /** The receipt of the record's transaction, or of one it replaced (whichever was mined). */
  private async receiptOfAny(signed: SignedTransfer): Promise<TransactionReceipt | undefined> {
    for (const hash of hashesOf(signed).reverse()) {
      const receipt = await this.receipt(hash);
      if (receipt) return receipt;
    }
    return undefined;
  }

  /** Runs `fn` holding the treasury send lock (waits for it up to twice `lockMs`). */
  async withSendLock<T>(fn: () => Promise<T>): Promise<T> {
    const holder = randomUUID();
    const leaseMs = this.o.lockMs ?? 60_000;
    const deadline = Date.now() + 2 * leaseMs;
    let wait = 25;
    while (!(await takeLease(this.o.redis, { leaseKey: this.lockKey, holder, leaseMs }))) {
      if (Date.now() > deadline) throw new Error('treasury send lock not obtained');
      await sleep(wait);
      wait = Math.min(wait * 2, 500);
    }
    try {
      return await fn();
    } finally {
      await releaseLease(this.o.redis, { leaseKey: this.lockKey, holder }).catch(() => undefined);
    }
  }

  private signAndSend(p: TransferOnceParams): Promise<SignedTransfer> {
    return this.withSendLock(async () => {
      // signing happens only here, under the lock, and only for an empty record: a transaction
      // another attempt stored meanwhile is used (waited for, rebroadcast later), never doubled
      const stored = await p.record.load();
      if (stored) {
        await this.broadcast(stored.raw).catch(() => undefined); // the same bytes: harmless if already sent
        return stored;
      }
      const nonce = await this.publicClient.getTransactionCount({ address: this.address, blockTag: 'pending' });
      const request = await this.wallet
        .prepareTransactionRequest({
          to: this.o.asset,
          data: p.data ?? encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [p.to, p.amount] }),
          nonce,
          chain: this.o.chain,
          account: this.o.treasury,
        })
        .catch((e: unknown) => {
          if (isRevert(e)) throw new TransferWouldRevertError('the transfer would revert (treasury balance too low?)');
          throw new Error('could not prepare the treasury transfer');
        });
      const raw = await this.wallet.signTransaction(request as never);
      const signed: SignedTransfer = { raw, hash: keccak256(raw), nonce };
      await p.record.save(signed);
      await p.hooks?.afterSign?.(signed);
      await this.broadcast(raw);
      // release the lock only once the node counts this nonce, so the next sender's `pending` nonce is past it
      const until = Date.now() + (this.o.pendingNonceWaitMs ?? 5_000);
      while ((await this.publicClient.getTransactionCount({ address: this.address, blockTag: 'pending' })) <= nonce && Date.now() < until) {
        await sleep(100);
      }
      return signed;
    });
  }

  /** Broadcasts `raw`: `sent` (the node took it now) or `known` (it was in its pool already); throws when refused. */
  private async broadcast(raw: Hex): Promise<'sent' | 'known'> {
    try {
      await this.publicClient.sendRawTransaction({ serializedTransaction: raw });
      return 'sent';
    } catch (e) {
      const msg = String((e as Error).message).toLowerCase();
      if (msg.includes('already known') || msg.includes('already imported')) return 'known';
      if (msg.includes('nonce too low')) throw new Error('treasury transfer nonce already used; reconciled on the next attempt');
      throw new Error('treasury transfer broadcast failed');
    }
  }

  /**
   * The receipt of `hash`, or undefined only when the node answers that it has none
   * (`TransactionReceiptNotFoundError`). Any other failure (timeout, 429, 5xx, a malformed answer)
   * throws {@link TreasuryReadError}: a failed read proves nothing, so the caller retries later
   * instead of treating the transfer as unmined (which would sign it a second time).
   */
  private async receipt(hash: Hex): Promise<TransactionReceipt | undefined> {
    try {
      return await this.publicClient.getTransactionReceipt({ hash });
    } catch (e) {
      if (isReceiptNotFound(e)) return undefined;
      throw new TreasuryReadError(`could not read the receipt of ${hash}; retry later`);
    }
  }

  /** Whether the node knows `hash` (pending or mined); throws {@link TreasuryReadError} when the read fails. */
  private async knownTransaction(hash: Hex): Promise<boolean> {
    try {
      await this.publicClient.getTransaction({ hash });
      return true;
    } catch (e) {
      if (e instanceof TransactionNotFoundError || (e instanceof BaseError && e.walk((x) => x instanceof TransactionNotFoundError))) return false;
      throw new TreasuryReadError(`could not read the transaction ${hash}; retry later`);
    }
  }

  private outcome(receipt: TransactionReceipt): TransferOutcome {
    return { hash: receipt.transactionHash, status: receipt.status === 'success' ? 'success' : 'reverted' };
  }
}

/** Every hash a stored transfer stands for: the ones it replaced, oldest first, then its own. */
function hashesOf(signed: SignedTransfer): Hex[] {
  return [...(signed.replaces ?? []), signed.hash];
}

/**
 * Fees of a replacement: each of the replaced transaction's EIP-1559 fees raised by `percent`
 * (rounded up), and at least the node's current estimate. A legacy-priced transaction's `gasPrice`
 * stands for both.
 */
export function bumpedFees(
  previous: { maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint; gasPrice?: bigint },
  estimate: { maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint } | undefined,
  percent: number,
): { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } {
  const up = (v: bigint) => (v * BigInt(100 + percent) + 99n) / 100n;
  const atLeast = (v: bigint, floor: bigint | undefined) => (floor !== undefined && floor > v ? floor : v);
  const maxFee = previous.maxFeePerGas ?? previous.gasPrice ?? 0n;
  const tip = previous.maxPriorityFeePerGas ?? previous.gasPrice ?? 0n;
  const maxPriorityFeePerGas = atLeast(up(tip), estimate?.maxPriorityFeePerGas);
  const maxFeePerGas = atLeast(atLeast(up(maxFee), estimate?.maxFeePerGas), maxPriorityFeePerGas);
  return { maxFeePerGas, maxPriorityFeePerGas };
}

/** True only for the node's answer "no receipt for this hash" (null), never for a transport or server error. */
function isReceiptNotFound(e: unknown): boolean {
  if (e instanceof TransactionReceiptNotFoundError) return true;
  return e instanceof BaseError && Boolean(e.walk((x) => x instanceof TransactionReceiptNotFoundError));
}

function isRevert(e: unknown): boolean {
  if (!(e instanceof BaseError)) return false;
  return Boolean(e.walk((x) => (x as Error).name === 'ExecutionRevertedError' || (x as Error).name === 'ContractFunctionRevertedError'));
}
