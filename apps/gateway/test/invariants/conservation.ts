import { readRefund } from '@acg/treasury';
import type { LedgerEntry, PayoutRecord } from '@acg/provider-ledger';
import { permit2NonceHex } from '@acg/payments';
import { PERMIT2_ADDRESS, x402UptoPermit2ProxyABI, x402UptoPermit2ProxyAddress } from '@x402/evm';
import { createPublicClient, decodeFunctionData, erc20Abi, http, parseAbiItem, type Hex, type PublicClient } from 'viem';
import type { TestGateway } from '../harness.js';
import { accountKeys } from '@acg/accounts/commands';
import { paymentKeys } from '@acg/payments/commands';
import { treasuryKeys } from '@acg/treasury';
import { providerLedgerKeys } from '@acg/provider-ledger/commands';
import { channelsTruth, checkChannels, receiverView } from './channelTruth.js';

/**
 * The money conservation checks of the invariant suite (`money.int.test.ts`; docs/money-invariants.md).
 * Every check reads ground truth only: USDC logs and balances on anvil, and the records the
 * gateway keeps in Redis (payment reservations, refund records, execution records, provider
 * ledger entries and payouts, metered accounts). The suite's model only says which payers and which
 * provider belong to the sequence under test (its scope); it never supplies an amount.
 */

type Address = `0x${string}`;

export type { Scope } from './scope.js';
import type { Scope } from './scope.js';

const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
const AUTHORIZATION_USED = parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)');

/** One settled x402 payment into the treasury, read from the chain, with its reservation in Redis. */
export interface ChainPayment {
  /** `exact`: an EIP-3009 authorization; `upto`: a Permit2 witness transfer through the x402UptoPermit2Proxy */
  scheme: 'exact' | 'upto';
  payer: Address;
  nonce: Hex;
  tx_hash: Hex;
  /** USDC base units moved payer → treasury by this authorization */
  amount: bigint;
  /** the reservation's fields (state, operation_id, amount...), empty when Redis has none */
  reservation: Record<string, string>;
}

const lower = (a: string) => a.toLowerCase();

/** Reads ground truth for `scope` from the chain and Redis. */
export class MoneyTruth {
  readonly client: PublicClient;

  constructor(readonly t: TestGateway) {
    this.client = createPublicClient({ transport: http(t.stack.payment.rpcUrl) }) as PublicClient;
  }

  get usdc(): Address {
    return this.t.stack.payment.usdc;
  }

  get treasury(): Address {
    return this.t.stack.payment.treasury.address;
  }

  /** USDC balance (base units), at `blockNumber` when given. */
  balanceOf(address: Address, blockNumber?: bigint): Promise<bigint> {
    return this.client.readContract({
      address: this.usdc,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [address],
      ...(blockNumber === undefined ? {} : { blockNumber }),
    });
  }

  /** A scope starting at the next block; the first provider and capability are the sequence's single-offer ones. */
  async begin(payers: Address[], providerIds: string[], capabilityIds: string[]): Promise<Scope> {
    const head = await this.client.getBlockNumber({ cacheTime: 0 });
    const payersBefore: Record<string, bigint> = {};
    for (const p of payers) payersBefore[lower(p)] = await this.balanceOf(p, head);
    return {
      fromBlock: head + 1n,
      treasuryBefore: await this.balanceOf(this.treasury, head),
      payers,
      payersBefore,
      providerId: providerIds[0]!,
      capabilityId: capabilityIds[0]!,
      providerIds,
      capabilityIds,
      escrowBefore: await this.balanceOf(this.t.stack.payment.batchSettlement, head),
      receiverBefore: await receiverView(this, head),
    };
  }

  /** Every USDC Transfer mined since `fromBlock` (none when the chain has not reached it: anvil would answer older logs). */
  async transfers(fromBlock: bigint) {
    const head = await this.client.getBlockNumber({ cacheTime: 0 });
    if (head < fromBlock) return [];
    return this.client.getLogs({ address: this.usdc, event: TRANSFER, fromBlock, toBlock: head });
  }

  /**
   * Every payment into the treasury since `scope.fromBlock`, each with its Redis reservation: the
   * EIP-3009 authorizations used (`exact`; a channel deposit's authorization, in one of `depositTxs`,
   * is not a payment into the treasury), and the `upto` settlements (a transfer from a payer of the scope
   * in a transaction to the x402UptoPermit2Proxy; its Permit2 nonce read from the call).
   */
  async payments(scope: Scope, depositTxs: ReadonlySet<string> = new Set()): Promise<ChainPayment[]> {
    const { redis, keys } = this.t.gateway.services;
    const head = await this.client.getBlockNumber({ cacheTime: 0 });
    if (head < scope.fromBlock) return [];
    const [used, transfers] = await Promise.all([
      this.client.getLogs({ address: this.usdc, event: AUTHORIZATION_USED, fromBlock: scope.fromBlock, toBlock: head }),
      this.transfers(scope.fromBlock),
    ]);
    const out: ChainPayment[] = [];
    const network = `eip155:${this.t.config.payment.chain.id}`;
    for (const u of used) {
      if (depositTxs.has(u.transactionHash)) continue;
      const payer = u.args.authorizer as Address;
      const nonce = u.args.nonce as Hex;
      const moved = transfers.filter((x) => x.transactionHash === u.transactionHash && lower(x.args.from!) === lower(payer));
      const amount = moved.reduce((s, x) => s + (lower(x.args.to!) === lower(this.treasury) ? x.args.value! : 0n), 0n);
      const reservation = await redis.hgetall(paymentKeys.authorization(keys, network, this.usdc, payer, nonce));
      out.push({ scheme: 'exact', payer, nonce, tx_hash: u.transactionHash, amount, reservation });
    }
    const payers = new Set(scope.payers.map(lower));
    const exact = new Set(used.map((u) => u.transactionHash));
    for (const x of transfers) {
      if (lower(x.args.to!) !== lower(this.treasury) || !payers.has(lower(x.args.from!)) || exact.has(x.transactionHash)) continue;
      const tx = await this.client.getTransaction({ hash: x.transactionHash });
      if (lower(tx.to ?? '') !== lower(x402UptoPermit2ProxyAddress)) continue;
      const { args } = decodeFunctionData({ abi: x402UptoPermit2ProxyABI, data: tx.input });
      // settle(permit, ...) or settleWithPermit(eip2612Permit, permit, ...): the Permit2 permit is the argument with a `permitted`
      const permit = (args as readonly unknown[]).find((a) => typeof a === 'object' && a !== null && 'permitted' in a) as unknown as { nonce: bigint };
      const nonce = permit2NonceHex(permit.nonce.toString());
      const reservation = await redis.hgetall(paymentKeys.authorization(keys, network, PERMIT2_ADDRESS, x.args.from!, nonce));
      out.push({ scheme: 'upto', payer: x.args.from as Address, nonce, tx_hash: x.transactionHash, amount: x.args.value!, reservation });
    }
    return out;
  }

  /** A refund record (`refund:<operation id>`) with what was sent: the amount when `sent`, else 0. */
  async refund(operationId: string | null | undefined) {
    if (!operationId) return undefined;
    return readRefund(this.t.gateway.services.redis, this.t.gateway.services.keys, operationId);
  }

  /** Every key of this deployment matching `pattern` (after the prefix), by SCAN (the private Redis of this test). */
  async scan(pattern: string): Promise<string[]> {
    const { redis, keys } = this.t.gateway.services;
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${keys.prefix}${pattern}`, 'COUNT', 1000);
      found.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return found;
  }

  /** Every refund record of the deployment: operation id → {status, amount, payer, tx_hash}. */
  async refundRecords(): Promise<{ operation_id: string; status: string; amount: bigint; payer: string; tx_hash?: string; payment_tx_hash?: string }[]> {
    const { redis, keys } = this.t.gateway.services;
    const prefix = treasuryKeys.refund(keys, '');
    const out = [];
    for (const key of await this.scan('refund:*')) {
      const h = await redis.hgetall(key);
      if (!h.status) continue;
      out.push({
        operation_id: key.slice(prefix.length),
        status: h.status,
        amount: BigInt(h.amount ?? '0'),
        payer: h.payer ?? '',
        tx_hash: h.tx_hash,
        payment_tx_hash: h.payment_tx_hash,
      });
    }
    return out;
  }

  /** Every payout record of the deployment. */
  async payoutRecords(): Promise<PayoutRecord[]> {
    const ledger = this.t.gateway.services.providerLedger;
    const prefix = providerLedgerKeys.providerPayout(this.t.gateway.services.keys, '');
    const out: PayoutRecord[] = [];
    for (const key of await this.scan('pl:{pl}:payout:*')) {
      const p = await ledger.payout(key.slice(prefix.length));
      if (p) out.push(p);
    }
    return out;
  }

  /** The ledger entries of one provider. */
  async entriesOf(providerId: string): Promise<LedgerEntry[]> {
    const ledger = this.t.gateway.services.providerLedger;
    const prefix = providerLedgerKeys.providerLedgerEntry(this.t.gateway.services.keys, '');
    const out: LedgerEntry[] = [];
    for (const key of await this.scan('pl:{pl}:entry:*')) {
      const e = await ledger.entry(key.slice(prefix.length));
      if (e && e.provider_id === providerId) out.push(e);
    }
    return out;
  }

  /** A metered account: its stored balance fields and every usage line (newest first). */
  async account(address: Address) {
    const { redis, keys } = this.t.gateway.services;
    const [h, lines] = await Promise.all([redis.hgetall(accountKeys.account(keys, address)), redis.lrange(accountKeys.accountUsage(keys, address), 0, -1)]);
    return {
      balance: BigInt(h.balance ?? '0'),
      lines: lines.map((l) => JSON.parse(l) as { kind: 'debit' | 'credit'; amount: string; item: string; ref: string }),
    };
  }
}

const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);

/**
 * Redis-only invariants, cheap enough after every command:
 * - every metered account of the scope: balance = Σ credits − Σ debits of its usage lines (deposits
 *   and credit-backs are the credits), never below zero; a credit-back names a debit of the same
 *   reference, at most once;
 * - the scope's provider: `held` = Σ share of held entries, `available + reserved + paid` = Σ share
 *   of available entries, `paid` = Σ sent payouts, `reserved` = Σ reserved payouts (so no payout
 *   exceeds what became available); every entry splits its price as share + fee with the configured fee;
 * - every provider credit not refunded belongs to a SUCCEEDED execution of the same payer and price
 *   that has no refund record (a refunded payment must not stay credited).
 */
export async function checkRedis(truth: MoneyTruth, scope: Scope): Promise<string[]> {
  const v: string[] = [];
  for (const payer of scope.payers) {
    const { balance, lines } = await truth.account(payer);
    const credits = sum(lines.filter((l) => l.kind === 'credit').map((l) => BigInt(l.amount)));
    const debits = sum(lines.filter((l) => l.kind === 'debit').map((l) => BigInt(l.amount)));
    if (balance !== credits - debits) v.push(`account ${payer}: balance ${balance} ≠ credits ${credits} − debits ${debits}`);
    if (balance < 0n) v.push(`account ${payer}: negative balance ${balance}`);
    const creditBacks = lines.filter((l) => l.kind === 'credit' && l.item.startsWith('refund:'));
    for (const c of creditBacks) {
      if (!lines.some((l) => l.kind === 'debit' && l.ref === c.ref && l.amount === c.amount))
        v.push(`account ${payer}: credit-back ${c.ref} without its debit`);
      if (creditBacks.filter((x) => x.ref === c.ref).length > 1) v.push(`account ${payer}: credit-back ${c.ref} twice`);
    }
  }

  for (const providerId of scope.providerIds) v.push(...(await checkProvider(truth, providerId)));
  return v;
}

/**
 * One provider's ledger against its entries and payouts. A routed execution's payment may be above
 * the answering offer's price (the 402 asked for the route's highest price): the difference is
 * refunded under the execution's id, so a credit stays beside exactly that partial refund.
 */
async function checkProvider(truth: MoneyTruth, providerId: string): Promise<string[]> {
  const v: string[] = [];
  const { services } = truth.t.gateway;
  const { config } = truth.t;
  const entries = await truth.entriesOf(providerId);
  const feeBps = BigInt(config.providers.feeBps);
  for (const e of entries) {
    if (e.share + e.fee !== e.price || e.fee !== (e.price * feeBps) / 10_000n)
      v.push(`entry ${e.execution_id}: price ${e.price} split as share ${e.share} + fee ${e.fee}`);
    if (e.status === 'refunded') continue;
    const rec = await services.executions.get(e.execution_id);
    const above = rec ? BigInt(rec.payment.amount) - e.price : 0n;
    if (rec?.status !== 'SUCCEEDED') v.push(`provider credit ${e.execution_id} (${e.status}) belongs to an execution that is ${rec?.status ?? 'missing'}`);
    else if (lower(rec.payer ?? '') !== lower(e.payer) || above < 0n)
      v.push(`provider credit ${e.execution_id}: payer/price ${e.payer}/${e.price} ≠ execution's ${rec.payer}/${rec.payment.amount}`);
    const refund = await truth.refund(e.execution_id);
    if (refund && !(above > 0n && BigInt(refund.amount) === above))
      v.push(`provider credit ${e.execution_id} (${e.status}, share ${e.share}) stays while its payment is refunded (${refund.status} ${refund.amount})`);
  }
  const totals = await services.providerLedger.providerTotals(providerId);
  const held = sum(entries.filter((e) => e.status === 'held').map((e) => e.share));
  const matured = sum(entries.filter((e) => e.status === 'available').map((e) => e.share));
  const payouts = (await truth.payoutRecords()).filter((p) => p.provider_id === providerId);
  const sent = sum(payouts.filter((p) => p.status === 'sent').map((p) => p.amount));
  const reserved = sum(payouts.filter((p) => p.status === 'reserved').map((p) => p.amount));
  if (totals.held !== held) v.push(`provider ${providerId}: held ${totals.held} ≠ Σ held entries ${held}`);
  if (totals.available + totals.reserved + totals.paid !== matured)
    v.push(`provider ${providerId}: available ${totals.available} + reserved ${totals.reserved} + paid ${totals.paid} ≠ Σ available entries ${matured}`);
  if (totals.paid !== sent || totals.reserved !== reserved)
    v.push(`provider ${providerId}: paid/reserved ${totals.paid}/${totals.reserved} ≠ payouts ${sent}/${reserved}`);
  if (sent + reserved > matured) v.push(`provider ${providerId}: payouts ${sent + reserved} exceed what became available ${matured}`);
  return v;
}

/**
 * Every invariant, after a sequence has settled (refunds mined): {@link checkRedis}, plus against the chain:
 * - every payment into the treasury since the scope began is an EIP-3009 authorization of one of
 *   the scope's payers, with a completed reservation of the same amount;
 * - per payment of amount `a` (operation `op`): `refund(op) + dispute refund + provider share +
 *   fee ≤ a`, and `= a` for a provider capability; a deposit: `refund(op) + account credit = a`;
 *   an execution is SUCCEEDED and unrefunded, or refunded in full and not SUCCEEDED (one outcome);
 * - every provider credit was paid on-chain (its payment's reservation names its execution);
 * - every USDC transfer out of the treasury is exactly one `sent` refund or payout record of the
 *   same recipient and amount, and every `sent` record is mined;
 * - the treasury's USDC change = payments − refunds − payouts of the scope.
 */
export async function checkConservation(truth: MoneyTruth, scope: Scope): Promise<string[]> {
  const v = await checkRedis(truth, scope);
  const { services } = truth.t.gateway;
  const payers = new Set(scope.payers.map(lower));
  const channels = await channelsTruth(truth, scope);
  v.push(...(await checkChannels(truth, scope, channels)));
  const payments = await truth.payments(scope, channels.depositTxs);
  const transfers = await truth.transfers(scope.fromBlock);
  const treasury = lower(truth.treasury);
  const escrow = lower(truth.t.stack.payment.batchSettlement);

  const intoTreasury = transfers.filter((x) => lower(x.args.to!) === treasury);
  let settledIn = 0n;
  for (const x of intoTreasury) {
    // claimed channel funds settled to the treasury: a transfer out of escrow in a `Settled` transaction
    if (lower(x.args.from!) === escrow && channels.settleTxs.has(x.transactionHash)) {
      settledIn += x.args.value!;
      continue;
    }
    if (!payments.some((p) => p.tx_hash === x.transactionHash))
      v.push(`treasury received ${x.args.value} from ${x.args.from} (${x.transactionHash}) outside any x402 payment`);
  }
  if (settledIn !== channels.settledToTreasury)
    v.push(`treasury received ${settledIn} out of escrow; the contract's Settled events say ${channels.settledToTreasury}`);
  const sentRefunds = (await truth.refundRecords()).filter((r) => r.status === 'sent' && r.tx_hash);
  const paymentOps = new Set(payments.map((p) => p.reservation.operation_id).filter(Boolean));
  for (const p of payments) {
    const tag = `payment ${p.tx_hash.slice(0, 10)} by ${p.payer.slice(0, 8)}`;
    if (!payers.has(lower(p.payer))) {
      v.push(`${tag}: not a payer of this sequence`);
      continue;
    }
    const r = p.reservation;
    const op = r.operation_id;
    if (r.state !== 'completed') v.push(`${tag}: reservation ${r.state ?? 'missing'} (operation ${op}) after the sequence settled`);
    if (r.amount !== undefined && BigInt(r.amount) !== p.amount) v.push(`${tag}: reservation amount ${r.amount} ≠ paid ${p.amount}`);
    if (!op) continue;
    const refund = await truth.refund(op);
    if (refund && refund.status !== 'sent') v.push(`${tag}: refund of ${op} still ${refund.status}`);
    const refunded = refund ? BigInt(refund.amount) : 0n;
    if (op.startsWith('exe_')) {
      const rec = await services.executions.get(op);
      const entry = await services.providerLedger.entry(op);
      const dispute = entry?.status === 'refunded' ? await truth.refund(entry.dispute_id) : undefined;
      const disputeRefund = dispute ? BigInt(dispute.amount) : 0n;
      const credited = entry && entry.status !== 'refunded' ? entry.share + entry.fee : 0n;
      const total = refunded + disputeRefund + credited;
      if (total > p.amount)
        v.push(`${tag}: ${op} paid ${p.amount} but refunds ${refunded} + dispute refund ${disputeRefund} + share and fee ${credited} = ${total}`);
      const isProvider = scope.capabilityIds.includes(rec?.capability_id ?? '') || entry !== undefined;
      if (isProvider && total !== p.amount)
        v.push(
          `${tag}: provider execution ${op} (${rec?.status ?? 'no record'}) paid ${p.amount} but refunds ${refunded} + dispute refund ${disputeRefund} + share and fee ${credited} = ${total}`,
        );
      // a routed success is refunded exactly what its payment was above the answering offer's price
      const above = entry ? p.amount - entry.price : 0n;
      if (rec?.status === 'SUCCEEDED' && refunded !== above)
        v.push(`${tag}: ${op} is SUCCEEDED and its payment refunded ${refunded}, not the ${above} above its answering price`);
      if (rec?.status !== 'SUCCEEDED' && refunded !== p.amount)
        v.push(`${tag}: ${op} is ${rec?.status ?? 'not recorded'} and refunded ${refunded} of ${p.amount}`);
      if (entry && (entry.price > p.amount || lower(entry.payer) !== lower(p.payer) || entry.payment_tx_hash !== p.tx_hash))
        v.push(`${tag}: ledger entry ${op} names price/payer/tx ${entry.price}/${entry.payer}/${entry.payment_tx_hash}`);
    } else if (op.startsWith('dep_')) {
      const { lines } = await truth.account(p.payer);
      // a deposit whose answer failed after its credit is refunded with the credit reversed (a
      // `reversal:deposit` debit, ref `rev:<dep_id>`): what stays credited is the credit less that reversal
      const credited = sum(lines.filter((l) => l.kind === 'credit' && l.item === 'deposit' && l.ref === op).map((l) => BigInt(l.amount)));
      const reversed = sum(lines.filter((l) => l.kind === 'debit' && l.item === 'reversal:deposit' && l.ref === `rev:${op}`).map((l) => BigInt(l.amount)));
      const credit = credited - reversed;
      if (refunded + credit !== p.amount) v.push(`${tag}: deposit ${op} paid ${p.amount} but refunded ${refunded} + credited ${credit}`);
    } else if (op.startsWith('rcn_')) {
      // a payment the chain reconciliation found without its records: refunded in full, by its own
      // refund and by the refunds of it found on chain (their records restored under their operations)
      const found = sentRefunds.filter((x) => x.operation_id !== op && x.payment_tx_hash === p.tx_hash && !paymentOps.has(x.operation_id));
      const total = refunded + sum(found.map((x) => x.amount));
      if (total !== p.amount)
        v.push(`${tag}: ${op} (found by the chain reconciliation) refunded ${refunded} + ${total - refunded} found on chain of ${p.amount}`);
    } else if (op.startsWith('job_')) {
      // a job's budget payment: what its steps spent (their SUCCEEDED executions) stays paid; `upto`
      // settles exactly that with no refund, `exact` refunds the rest of the budget
      const job = await services.jobs.store.get(op);
      let spent = 0n;
      for (const s of job?.steps ?? []) {
        const e = s.execution_id ? await services.executions.get(s.execution_id) : undefined;
        if (e?.status === 'SUCCEEDED') spent += BigInt(e.payment.amount);
      }
      if (!job) v.push(`${tag}: job ${op} has no record`);
      else if (job.payment.scheme === 'upto') {
        if (refunded !== 0n) v.push(`${tag}: upto job ${op} refunded ${refunded} (an upto settlement is never refunded)`);
        if (p.amount !== spent || String(p.amount) !== job.payment.amount || String(spent) !== job.spent)
          v.push(`${tag}: upto job ${op} settled ${p.amount}, its steps spent ${spent} (job: spent ${job.spent}, payment ${job.payment.amount})`);
      } else if (refunded + spent !== p.amount) v.push(`${tag}: job ${op} paid ${p.amount} but its steps spent ${spent} and it was refunded ${refunded}`);
    } else if (refunded > p.amount) v.push(`${tag}: ${op} refunded ${refunded} > paid ${p.amount}`);
  }
  // every provider credit was paid on-chain, by its payer, for its execution
  for (const providerId of scope.providerIds)
    for (const e of await truth.entriesOf(providerId)) {
      const p = payments.find((x) => x.tx_hash === e.payment_tx_hash && x.reservation.operation_id === e.execution_id);
      if (!p) v.push(`provider credit ${e.execution_id} (${e.status}): no payment ${e.payment_tx_hash} for it on-chain`);
    }
  // every metered deposit credit is a payment of this sequence's chain range
  for (const payer of scope.payers) {
    const { lines } = await truth.account(payer);
    for (const l of lines.filter((x) => x.kind === 'credit' && x.item === 'deposit')) {
      if (!payments.some((p) => p.reservation.operation_id === l.ref)) v.push(`account ${payer}: deposit credit ${l.ref} without a payment`);
    }
  }

  // the treasury's outflows: each one record, each record mined
  const outOfTreasury = transfers.filter((x) => lower(x.args.from!) === treasury);
  const refunds = (await truth.refundRecords()).filter((r) => r.status === 'sent' && r.tx_hash);
  const payouts = (await truth.payoutRecords()).filter((p) => p.status === 'sent' && p.tx_hash);
  let refundsOut = 0n;
  let payoutsOut = 0n;
  for (const x of outOfTreasury) {
    const byRefund = refunds.filter((r) => r.tx_hash === x.transactionHash && lower(r.payer) === lower(x.args.to!) && r.amount === x.args.value);
    const byPayout = payouts.filter((p) => p.tx_hash === x.transactionHash && lower(p.address) === lower(x.args.to!) && p.amount === x.args.value);
    if (byRefund.length + byPayout.length !== 1)
      v.push(`treasury sent ${x.args.value} to ${x.args.to} (${x.transactionHash}) matching ${byRefund.length} refund and ${byPayout.length} payout records`);
    refundsOut += sum(byRefund.map((r) => r.amount));
    payoutsOut += sum(byPayout.map((p) => p.amount));
  }
  // every refund and payout recorded sent is on chain: a transfer of its amount to its recipient in its transaction
  const onChain = (hash: string | undefined, to: string, amount: bigint) =>
    outOfTreasury.some((x) => x.transactionHash === hash && lower(x.args.to!) === lower(to) && x.args.value === amount);
  const ours = refunds.filter((r) => payers.has(lower(r.payer)));
  for (const r of ours) if (!onChain(r.tx_hash, r.payer, r.amount)) v.push(`refund of ${r.operation_id} marked sent (${r.tx_hash}) but not on chain`);
  const providerPayouts = payouts.filter((p) => scope.providerIds.includes(p.provider_id));
  for (const p of providerPayouts)
    if (!onChain(p.tx_hash ?? undefined, p.address, p.amount)) v.push(`payout ${p.payout_id} of ${p.provider_id} marked sent (${p.tx_hash}) but not on chain`);
  // every refund goes back for a payment on chain: of its operation, or, for a dispute, of the disputed execution
  const paidOps = new Set(payments.map((p) => p.reservation.operation_id).filter(Boolean));
  const entries = (await Promise.all(scope.providerIds.map((id) => truth.entriesOf(id)))).flat();
  for (const r of ours) {
    if (paidOps.has(r.operation_id) || payments.some((p) => p.tx_hash === r.payment_tx_hash)) continue;
    const disputed = entries.find((e) => e.dispute_id === r.operation_id);
    if (disputed && payments.some((p) => p.tx_hash === disputed.payment_tx_hash && p.reservation.operation_id === disputed.execution_id)) continue;
    v.push(`refund of ${r.operation_id} (${r.amount} to ${r.payer}) has no payment on chain`);
  }

  // the on-chain balances match the ledger to the base unit: each payer paid what its payments say
  // and got back what its refund records say; each provider holds what its payouts say
  for (const payer of scope.payers) {
    const paidBy = sum(payments.filter((p) => lower(p.payer) === lower(payer)).map((p) => p.amount));
    const back = sum(ours.filter((r) => lower(r.payer) === lower(payer)).map((r) => r.amount));
    // its channels: deposits into escrow, cooperative refunds and timed withdrawals back out of it
    const mine = channels.channels.filter((c) => lower(c.payer) === lower(payer));
    const channelNet = sum(mine.map((c) => c.refunded + c.withdrawn - c.deposited));
    const expected = scope.payersBefore[lower(payer)]! - paidBy + back + channelNet;
    const actual = await truth.balanceOf(payer);
    if (actual !== expected) v.push(`payer ${payer} holds ${actual} on chain; its payments, refunds and channels say ${expected}`);
  }
  const byAddress = new Map<string, bigint>();
  for (const p of providerPayouts) byAddress.set(lower(p.address), (byAddress.get(lower(p.address)) ?? 0n) + p.amount);
  for (const [address, owed] of byAddress) {
    const actual = (await truth.balanceOf(address as Address)) - (await truth.balanceOf(address as Address, scope.fromBlock - 1n));
    if (actual !== owed) v.push(`provider address ${address} received ${actual} on chain; its payouts say ${owed}`);
  }
  const paid = sum(payments.map((p) => p.amount));
  const delta = (await truth.balanceOf(truth.treasury)) - scope.treasuryBefore;
  const exactPaid = sum(payments.filter((p) => p.scheme === 'exact').map((p) => p.amount));
  const uptoPaid = paid - exactPaid;
  if (delta !== exactPaid + uptoPaid + channels.settledToTreasury - refundsOut - payoutsOut)
    v.push(
      `treasury changed by ${delta} ≠ exact ${exactPaid} + upto ${uptoPaid} + settled channel funds ${channels.settledToTreasury} − refunds ${refundsOut} − payouts ${payoutsOut}`,
    );
  return v;
}
