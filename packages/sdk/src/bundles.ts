import { createPublicClient, http, type Address, type Hex, type LocalAccount, type WalletClient } from 'viem';
import { sendBundle, type BundleTransportOptions, type SendBundleOptions, type SendBundleReturnType } from './builder.js';
import { AcgError } from './errors.js';
import type { LiquidationPlan } from './types.js';

/**
 * Signing and sending a liquidation plan as one bundle (docs/liquidation-plans.md "Sending the plan"):
 * the plan's unsigned transactions become EIP-1559 transactions signed by the searcher, sent with
 * `eth_sendBundle` for the plan's `target_block`, with the request signed the Flashbots way
 * (`X-Flashbots-Signature`, as `@flashbots/ethers-provider-bundle` signs it).
 */

/** Who signs the plan's transactions: a viem local account, or a wallet client holding one (or a node-managed account). */
export type PlanSigner = LocalAccount | WalletClient;

/** Chain ids of the spec chain names a plan names (the Ethereum dev chain is chain id 1 too). */
export const PLAN_CHAIN_IDS: Record<LiquidationPlan['chain'], number> = { ethereum: 1, base: 8453, arbitrum: 42161 };

/** Options of {@link signPlanTransactions} and {@link sendPlanBundle}. */
export interface SignPlanOptions {
  /** The searcher's first nonce. Default: read at `pending` from `ethereumRpcUrl` (or the wallet client's transport). */
  nonce?: number;
  /** JSON-RPC URL of the plan's chain, to read the nonce when `nonce` is not given and the signer is a local account. */
  ethereumRpcUrl?: string;
  /** Default: from `plan.chain` ({@link PLAN_CHAIN_IDS}). */
  chainId?: number;
  /** Tip per gas, wei (default 1 gwei: the builder ranks bundles by what they pay the coinbase). */
  maxPriorityFeePerGas?: bigint;
  /** Fee cap per gas, wei (default 2 × the plan's `base_fee_per_gas` + the tip). */
  maxFeePerGas?: bigint;
}

/** Options of {@link sendPlanBundle}: signing, the `eth_sendBundle` fields, and who signs the request header. */
export interface SendPlanOptions extends SignPlanOptions, SendBundleOptions, BundleTransportOptions {
  /**
   * The account whose `X-Flashbots-Signature` identifies the searcher to the builder (Flashbots'
   * "auth signer", often not the key that holds funds). Default: the signer, when it is a local account.
   */
  authSigner?: LocalAccount;
  /** Target block (default the plan's `target_block`). */
  blockNumber?: bigint | number;
}

const isLocalAccount = (s: PlanSigner): s is LocalAccount => (s as LocalAccount).type === 'local';
const addressOf = (s: PlanSigner): Address | undefined => (isLocalAccount(s) ? s.address : s.account?.address);

/**
 * Signs the plan's transactions in order (nonces `nonce`, `nonce + 1`, …), as EIP-1559 transactions
 * with the plan's `to`, `data`, `value` and `gas`. The signer must be the plan's `searcher`.
 *
 * @returns The signed raw transactions, in bundle order.
 * @throws {AcgError} when the signer is not the plan's searcher, or no nonce can be read.
 */
export async function signPlanTransactions(plan: LiquidationPlan, signer: PlanSigner, opts: SignPlanOptions = {}): Promise<Hex[]> {
  const from = addressOf(signer);
  if (!from || from.toLowerCase() !== plan.searcher.toLowerCase())
    throw new AcgError(`The plan is for the searcher ${plan.searcher}; the signer is ${from ?? 'without an account'}.`);
  const chainId = opts.chainId ?? PLAN_CHAIN_IDS[plan.chain];
  const tip = opts.maxPriorityFeePerGas ?? 1_000_000_000n;
  const maxFee = opts.maxFeePerGas ?? 2n * BigInt(plan.base_fee_per_gas) + tip;
  let nonce = opts.nonce;
  if (nonce === undefined) {
    if (opts.ethereumRpcUrl)
      nonce = await createPublicClient({ transport: http(opts.ethereumRpcUrl) }).getTransactionCount({ address: from, blockTag: 'pending' });
    // a wallet client's transport reaches a node, which answers the nonce
    else if (!isLocalAccount(signer))
      nonce = Number(BigInt((await signer.request({ method: 'eth_getTransactionCount' as never, params: [from, 'pending'] as never })) as string));
    else throw new AcgError('Signing a plan needs the nonce: pass `nonce` or `ethereumRpcUrl`.');
  }
  const txs: Hex[] = [];
  for (const [i, t] of plan.transactions.entries()) {
    const tx = {
      type: 'eip1559' as const,
      chainId,
      nonce: nonce + i,
      to: t.to as Address,
      data: t.data as Hex,
      value: BigInt(t.value),
      gas: BigInt(t.gas),
      maxFeePerGas: maxFee,
      maxPriorityFeePerGas: tip,
    };
    txs.push(isLocalAccount(signer) ? await signer.signTransaction(tx) : await signer.signTransaction({ ...tx, account: signer.account!, chain: null }));
  }
  return txs;
}

/**
 * Signs the plan ({@link signPlanTransactions}) and sends it as one bundle for its `target_block`
 * with `eth_sendBundle` to `rpcUrl` (`{builder_url}/rpc`), signed by `authSigner` the Flashbots way.
 *
 * @returns The bundle hash (computed locally), the target block and the searcher identity, and the signed `txs`.
 * @throws {AcgError} no header signer; {BundleRpcError} the builder refused the bundle.
 *
 * @example
 * const { bundleHash } = await sendPlanBundle({ rpcUrl: 'http://127.0.0.1:8081/rpc', plan, signer: account, opts: { ethereumRpcUrl } })
 */
export async function sendPlanBundle({
  rpcUrl,
  plan,
  signer,
  opts = {},
}: {
  rpcUrl: string;
  plan: LiquidationPlan;
  signer: PlanSigner;
  opts?: SendPlanOptions;
}): Promise<SendBundleReturnType & { txs: Hex[] }> {
  const { nonce, ethereumRpcUrl, chainId, maxPriorityFeePerGas, maxFeePerGas, authSigner, blockNumber, ...bundleOpts } = opts;
  const header = authSigner ?? (isLocalAccount(signer) ? signer : signer.account?.type === 'local' ? (signer.account as LocalAccount) : undefined);
  if (!header) throw new AcgError('Sending a bundle signs the request: pass `authSigner` (a local account) with a wallet client signer.');
  const txs = await signPlanTransactions(plan, signer, { nonce, ethereumRpcUrl, chainId, maxPriorityFeePerGas, maxFeePerGas });
  const sent = await sendBundle({ rpcUrl, account: header, txs, blockNumber: blockNumber ?? plan.target_block, opts: bundleOpts });
  return { ...sent, txs };
}
