import { concat, keccak256, stringToHex, toHex, type Address, type Hash, type Hex, type LocalAccount } from 'viem';
import { AcgError } from './errors.js';

/**
 * Bundle submission to `{builder_url}/rpc` (docs/spec-notes.md 4): JSON-RPC 2.0 `eth_sendBundle`,
 * `eth_cancelBundle`, `eth_callBundle`, `mev_sendBundle` (MEV-Share v0.1) and
 * `flashbots_getBundleStatsV2`, signed the Flashbots way: header
 * `X-Bundle-Signature: <address>:<signature>` where the signature is EIP-191 `personal_sign` of the
 * text `0x` + hex(keccak256(exact body bytes)). The signing address is the searcher identity
 * (replacement and cancellation by `replacementUuid` are scoped to it).
 */

/** Optional `eth_sendBundle` fields (Flashbots plus the builder's). Timestamps are UNIX seconds. */
export interface SendBundleOptions {
  minTimestamp?: number;
  maxTimestamp?: number;
  /** Hashes of bundle transactions allowed to revert (or be left out). */
  revertingTxHashes?: Hash[];
  /** Hashes of bundle transactions allowed to be left out (but not to revert). */
  droppingTxHashes?: Hash[];
  /** UUID to replace or cancel this bundle later. */
  replacementUuid?: string;
  /** 0..99: share of the bundle's value refunded to `refundRecipient`. */
  refundPercent?: number;
  refundRecipient?: Address;
  refundTxHashes?: Hash[];
  /** BuilderNet: orders bundles under one `replacementUuid`; one not above the last accepted is refused (-32602 `replacementNonce`). */
  replacementNonce?: number;
  /** BuilderNet: the address credited with this bundle's refunds instead of the signer (`buildernet_getFeeRefunds*`). */
  refundIdentity?: Address;
  /** BuilderNet: the `refundPercent` refund is recorded pending (no refund transaction in the block). Needs `refundPercent`. */
  delayedRefund?: boolean;
  /** BuilderNet's bundle format version; when set the builder answers `{bundleHash, receivedTimestampMs}`. `"v2"` for the fields below. */
  version?: 'v1' | 'v2';
  /** BuilderNet (`version: "v2"`): `"BottomOfBlock"` places the bundle after every other bundle of the block. */
  desiredState?: 'BottomOfBlock';
  /** BuilderNet (`version: "v2"`): contracts (pools) whose state the bundle targets; it lands only when the block before it touched one. */
  targetAddresses?: Address[];
  /** BuilderNet (`version: "v2"`): storage slots per target address, index-aligned with `targetAddresses` ([] = every slot). */
  targetSlots?: Hex[][];
}

/** Transport options shared by the bundle calls. */
export interface BundleTransportOptions {
  /** JSON-RPC request id (default 1). */
  id?: number;
  /** fetch implementation (default `globalThis.fetch`). */
  fetch?: typeof globalThis.fetch;
  signal?: AbortSignal;
}

/** Parameters of {@link sendBundle}. */
export interface SendBundleParameters {
  /** `{builder_url}/rpc`, e.g. `http://127.0.0.1:8081/rpc`. */
  rpcUrl: string;
  /** viem local account that signs the request (the searcher identity); it needs no ETH. */
  account: LocalAccount;
  /** Hex-encoded signed transactions, in bundle order (1..100, at most 300,000 bytes). */
  txs: Hex[];
  /** Target block number. */
  blockNumber: bigint | number;
  opts?: SendBundleOptions & BundleTransportOptions;
}

/** What {@link sendBundle} returns once the builder accepted the bundle (`result: null`, docs/spec-notes.md 4). */
export interface SendBundleReturnType {
  /** keccak256 of the concatenated transaction hashes (the Flashbots bundle hash), computed locally. */
  bundleHash: Hash;
  /** Target block, hex. */
  blockNumber: Hex;
  /** The signing address: the searcher identity the builder records. */
  searcher: Address;
  /** When the builder received the bundle, UNIX ms: present when it answered BuilderNet's `{bundleHash, receivedTimestampMs}` (`version` set). */
  receivedTimestampMs?: number;
}

/**
 * The builder answered with a JSON-RPC error: -32600 invalid request or signature, -32601 unknown
 * method, -32602 invalid params (`data.field` names the bad field), -32603 internal, -32005 rate
 * limited (HTTP 429; `retryAfterSeconds` from `Retry-After`), -32700 parse error.
 */
export class BundleRpcError extends AcgError {
  override name = 'BundleRpcError';
  constructor(
    readonly code: number,
    message: string,
    readonly data: Record<string, unknown> | undefined,
    readonly httpStatus: number,
    readonly retryAfterSeconds?: number,
  ) {
    super(`Builder error ${code}: ${message}`, { metaMessages: data?.field ? [`Field: ${String(data.field)}`] : undefined });
  }
}

/** The text signed for `body`: `0x` + hex(keccak256(body)) (66 characters). */
export function bundleSignatureMessage(body: string): Hex {
  return keccak256(stringToHex(body));
}

/**
 * The `X-Bundle-Signature` header value for `body`: `<address>:<signature>`.
 * Equals ethers v6 `${wallet.address}:${await wallet.signMessage(ethers.id(body))}`.
 */
export async function bundleSignatureHeader(account: LocalAccount, body: string): Promise<string> {
  return `${account.address}:${await account.signMessage({ message: bundleSignatureMessage(body) })}`;
}

/** The Flashbots bundle hash: keccak256 of the concatenated keccak256 hashes of the signed transactions. */
export function computeBundleHash(txs: readonly Hex[]): Hash {
  return keccak256(concat(txs.map((t) => keccak256(t))));
}

async function call(rpcUrl: string, account: LocalAccount, method: string, params: unknown[], opts: BundleTransportOptions = {}): Promise<unknown> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: opts.id ?? 1, method, params });
  const res = await (opts.fetch ?? globalThis.fetch)(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Bundle-Signature': await bundleSignatureHeader(account, body) },
    body,
    signal: opts.signal,
  });
  const text = await res.text();
  let json: { result?: unknown; error?: { code: number; message: string; data?: Record<string, unknown> } };
  try {
    json = JSON.parse(text);
  } catch {
    throw new BundleRpcError(-32603, `the builder answered HTTP ${res.status} without a JSON-RPC body`, undefined, res.status);
  }
  if (json.error) {
    const retry = res.headers.get('retry-after');
    throw new BundleRpcError(json.error.code, json.error.message, json.error.data, res.status, retry ? Number(retry) : undefined);
  }
  return json.result;
}

/**
 * Sends a bundle with `eth_sendBundle`, signed by `account` the Flashbots way.
 *
 * @returns the locally computed bundle hash, target block and searcher once the builder answered `result: null`.
 * @throws {BundleRpcError} with the builder's JSON-RPC error (e.g. -32602 naming the bad field, -32005 rate limited).
 *
 * @example
 * const { bundleHash } = await sendBundle({ rpcUrl: 'http://127.0.0.1:8081/rpc', account, txs: [signedTx], blockNumber: head + 1n })
 */
export async function sendBundle({ rpcUrl, account, txs, blockNumber, opts = {} }: SendBundleParameters): Promise<SendBundleReturnType> {
  const { id, fetch, signal, ...fields } = opts;
  const target = toHex(BigInt(blockNumber));
  const params = Object.fromEntries(Object.entries({ txs, blockNumber: target, ...fields }).filter(([, v]) => v !== undefined));
  const answer = await call(rpcUrl, account, 'eth_sendBundle', [params], { id, fetch, signal });
  const received = (answer as { receivedTimestampMs?: unknown } | null)?.receivedTimestampMs;
  return {
    bundleHash: computeBundleHash(txs),
    blockNumber: target,
    searcher: account.address,
    ...(typeof received === 'number' ? { receivedTimestampMs: received } : {}),
  };
}

/**
 * Cancels the searcher's bundle sent with `replacementUuid` (`eth_cancelBundle`; idempotent).
 * @throws {BundleRpcError}
 */
export async function cancelBundle({
  rpcUrl,
  account,
  replacementUuid,
  opts,
}: {
  rpcUrl: string;
  account: LocalAccount;
  replacementUuid: string;
  opts?: BundleTransportOptions;
}): Promise<void> {
  await call(rpcUrl, account, 'eth_cancelBundle', [{ replacementUuid }], opts);
}

/**
 * Simulates a bundle without queuing it (`eth_callBundle`): per-transaction gas, fees and ETH sent
 * to the coinbase (wei as decimal strings, Flashbots shape).
 * @throws {BundleRpcError}
 */
export async function callBundle({
  rpcUrl,
  account,
  txs,
  blockNumber,
  opts = {},
}: {
  rpcUrl: string;
  account: LocalAccount;
  txs: Hex[];
  blockNumber: bigint | number;
  opts?: BundleTransportOptions & { stateBlockNumber?: bigint | 'latest'; timestamp?: number };
}): Promise<Record<string, unknown>> {
  const { stateBlockNumber, timestamp, ...transport } = opts;
  const params: Record<string, unknown> = {
    txs,
    blockNumber: toHex(BigInt(blockNumber)),
    stateBlockNumber: stateBlockNumber === undefined || stateBlockNumber === 'latest' ? 'latest' : toHex(stateBlockNumber),
  };
  if (timestamp !== undefined) params.timestamp = timestamp;
  return (await call(rpcUrl, account, 'eth_callBundle', [params], transport)) as Record<string, unknown>;
}

/** One `mev_sendBundle` body entry: a signed transaction, and whether it may revert without failing the bundle. */
export interface MevShareBodyTx {
  tx: Hex;
  canRevert: boolean;
}

/** The privacy hints MEV-Share defines (accepted by the builder, which shares nothing with anyone). */
export type MevShareHint = 'calldata' | 'contract_address' | 'logs' | 'function_selector' | 'hash' | 'tx_hash' | 'full' | 'default_logs';

/**
 * A MEV-Share bundle (format v0.1, Flashbots' `mev_sendBundle`; `version` is added by
 * {@link mevSendBundle}). This builder runs no matchmaker: every body entry is a signed transaction
 * (`{hash}` and nested `{bundle}` entries are refused with -32602 `unsupported_body_entry`).
 */
export interface MevShareBundle {
  /** First target block and, optionally, the last one (at most 30 blocks later). */
  inclusion: { block: bigint | number; maxBlock?: bigint | number };
  /** The transactions, in bundle order. */
  body: MevShareBodyTx[];
  /** At most one refund: `percent` (0-99) of the bundle's value to the sender of `body[bodyIdx]`, or to `refundConfig[0].address` (`percent: 100`). */
  validity?: { refund?: { bodyIdx: number; percent: number }[]; refundConfig?: { address: Address; percent: 100 }[] };
  privacy?: { hints?: MevShareHint[]; builders?: string[] };
  metadata?: { originId?: string };
}

/** Parameters of {@link mevSendBundle}. */
export interface MevSendBundleParameters {
  /** `{builder_url}/rpc`. */
  rpcUrl: string;
  /** viem local account that signs the request (the searcher identity); it needs no ETH. */
  account: LocalAccount;
  bundle: MevShareBundle;
  opts?: BundleTransportOptions;
}

/**
 * Sends a MEV-Share bundle with `mev_sendBundle`, signed by `account`: the bundle joins the pool
 * for every block from `inclusion.block` to `inclusion.maxBlock`.
 *
 * @returns `{bundleHash}` as the builder answered it: keccak256 of the concatenated transaction
 *   hashes (what {@link computeBundleHash} gives for the body's txs), the key of {@link getBundleStats}.
 * @throws {BundleRpcError} -32602 with `data.field` naming the bad field (`body[1].tx`, `inclusion.maxBlock`, ...).
 *
 * @example
 * const { bundleHash } = await mevSendBundle({ rpcUrl, account, bundle: { inclusion: { block: head + 1n, maxBlock: head + 3n }, body: [{ tx: signedTx, canRevert: false }] } })
 */
export async function mevSendBundle({ rpcUrl, account, bundle, opts }: MevSendBundleParameters): Promise<{ bundleHash: Hash }> {
  const { inclusion, ...rest } = bundle;
  const params = {
    version: 'v0.1',
    inclusion: { block: toHex(BigInt(inclusion.block)), ...(inclusion.maxBlock !== undefined ? { maxBlock: toHex(BigInt(inclusion.maxBlock)) } : {}) },
    ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)),
  };
  return (await call(rpcUrl, account, 'mev_sendBundle', [params], opts)) as { bundleHash: Hash };
}

/** One builder's time for a bundle: its BLS public key and an RFC 3339 UTC time. */
export interface BuilderTimestamp {
  pubkey: Hex;
  timestamp: string;
}

/**
 * `flashbots_getBundleStatsV2` for a bundle this searcher sent (Flashbots' fields plus this
 * builder's relays and landing). Times are RFC 3339 UTC with milliseconds.
 */
export interface BundleStats {
  isHighPriority: boolean;
  isSimulated: boolean;
  simulatedAt?: string;
  receivedAt: string;
  /** When the builder chose the bundle for a block of the target height. */
  consideredByBuildersAt: BuilderTimestamp[];
  /** When the builder sealed a block holding the bundle. */
  sealedByBuildersAt: BuilderTimestamp[];
  /** The last submission of a block holding the bundle, per relay, and whether the relay accepted it. */
  sentToRelaysAt: { relay: string; timestamp: string; accepted: boolean }[];
  /** The canonical block at the target height holds every transaction of the bundle (all but droppingTxHashes). */
  landed: boolean;
  landedBlockHash?: Hash;
  landedAt?: string;
  /** Whether the landed block is the one this builder sealed. */
  landedInSealedBlock?: boolean;
}

/**
 * The life of a bundle (`flashbots_getBundleStatsV2`): received, simulated, considered, sealed,
 * sent to each relay, landed. A bundle `account` did not send, an unknown hash or another block
 * answer Flashbots' `{isSimulated: false}` (no searcher learns about another's bundles).
 *
 * @throws {BundleRpcError} -32602 naming `bundleHash` or `blockNumber`.
 */
export async function getBundleStats({
  rpcUrl,
  account,
  bundleHash,
  blockNumber,
  opts,
}: {
  rpcUrl: string;
  account: LocalAccount;
  bundleHash: Hash;
  blockNumber: bigint | number;
  opts?: BundleTransportOptions;
}): Promise<BundleStats | { isSimulated: false }> {
  return (await call(rpcUrl, account, 'flashbots_getBundleStatsV2', [{ bundleHash, blockNumber: toHex(BigInt(blockNumber)) }], opts)) as
    | BundleStats
    | { isSimulated: false };
}

/** The bundle part of the client (`client.builder`), bound to one builder URL and account. */
export interface BuilderClient {
  sendBundle(txs: Hex[], blockNumber: bigint | number, opts?: SendBundleOptions & BundleTransportOptions): Promise<SendBundleReturnType>;
  cancelBundle(replacementUuid: string, opts?: BundleTransportOptions): Promise<void>;
  callBundle(
    txs: Hex[],
    blockNumber: bigint | number,
    opts?: BundleTransportOptions & { stateBlockNumber?: bigint | 'latest'; timestamp?: number },
  ): Promise<Record<string, unknown>>;
  mevSendBundle(bundle: MevShareBundle, opts?: BundleTransportOptions): Promise<{ bundleHash: Hash }>;
  getBundleStats(bundleHash: Hash, blockNumber: bigint | number, opts?: BundleTransportOptions): Promise<BundleStats | { isSimulated: false }>;
}

/**
 * Binds the bundle calls to `rpcUrl` and `account`: what the gateway client exposes as `client.builder`.
 *
 * @example
 * const builder = createBuilderClient({ rpcUrl: 'http://127.0.0.1:8081/rpc', account })
 * await builder.sendBundle([signedTx], head + 1n, { replacementUuid })
 */
export function createBuilderClient({ rpcUrl, account, fetch }: { rpcUrl: string; account: LocalAccount; fetch?: typeof globalThis.fetch }): BuilderClient {
  return {
    sendBundle: (txs, blockNumber, opts) => sendBundle({ rpcUrl, account, txs, blockNumber, opts: { fetch, ...opts } }),
    cancelBundle: (replacementUuid, opts) => cancelBundle({ rpcUrl, account, replacementUuid, opts: { fetch, ...opts } }),
    callBundle: (txs, blockNumber, opts) => callBundle({ rpcUrl, account, txs, blockNumber, opts: { fetch, ...opts } }),
    mevSendBundle: (bundle, opts) => mevSendBundle({ rpcUrl, account, bundle, opts: { fetch, ...opts } }),
    getBundleStats: (bundleHash, blockNumber, opts) => getBundleStats({ rpcUrl, account, bundleHash, blockNumber, opts: { fetch, ...opts } }),
  };
}
