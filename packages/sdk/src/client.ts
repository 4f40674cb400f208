import type { LocalAccount } from 'viem';
import { cancelJob } from './actions/cancelJob.js';
import { createJob } from './actions/createJob.js';
import { callPaidTool, type CallPaidToolParameters, type McpToolResult } from './actions/callPaidTool.js';
import { execute } from './actions/execute.js';
import { getChannel, refundChannel, topUpChannel, type ChannelInfo, type ChannelRequestParameters, type RefundChannelReturnType } from './actions/channels.js';
import { getExecution } from './actions/getExecution.js';
import { quote, type QuoteParameters, type QuoteReturnType } from './actions/quote.js';
import { getJob } from './actions/getJob.js';
import { searchLiquidations } from './actions/searchLiquidations.js';
import { waitForJob, type WaitForJobParameters } from './actions/waitForJob.js';
import { createBuilderClient, type BuilderClient } from './builder.js';
import { createGatewayContext, type GatewayContext, type GatewayContextOptions } from './context.js';
import { AcgError } from './errors.js';
import { planParams, type LiquidationsClient } from './liquidations.js';
import { planLiquidation } from './actions/planLiquidation.js';
import { sendPlanBundle, type PlanSigner, type SendPlanOptions } from './bundles.js';
import type { SendBundleReturnType } from './builder.js';
import type { LiquidationPlan } from './types.js';
import type { RegistryReadOptions } from './registryCache.js';
import type { SpendLimits } from './spend.js';
import { deposit, type DepositParameters, type DepositReturnType } from './actions/deposit.js';
import { getAccount } from './actions/getAccount.js';
import { onboardProvider, type OnboardProviderParameters, type OnboardProviderReturnType } from './actions/onboardProvider.js';
import type { AccountView, Capability, Execution, ExecutionRecord, JobCreated, JobRecord, JobRequest, Registry, SpendTotals } from './types.js';
import { signIn, type BearerToken } from './actions/signIn.js';
import { signOut } from './actions/signOut.js';
import { cancelSubscription } from './actions/walletMonitor/cancelSubscription.js';
import { getDeadLetters } from './actions/walletMonitor/getDeadLetters.js';
import { getDeliveries } from './actions/walletMonitor/getDeliveries.js';
import { getSubscription } from './actions/walletMonitor/getSubscription.js';
import { replayDeadLetters } from './actions/walletMonitor/replayDeadLetters.js';
import { sendTestEvent } from './actions/walletMonitor/sendTestEvent.js';
import { subscribe } from './actions/walletMonitor/subscribe.js';
import type { WalletMonitorClient } from './walletMonitor.js';

/** Options of {@link createGatewayClient}. */
export interface GatewayClientOptions {
  /** Bearer access token (Sign-In with Ethereum) for bearer-billed calls (liquidation search, wallet monitor). */
  accessToken?: string;
  /** Bundle-submission RPC URL ({builder_url}/rpc); default: the `builder.send_bundle` endpoint in /registry. */
  builderRpcUrl?: string;
  /** Gateway base URL, e.g. `http://127.0.0.1:8080` (a trailing `/` is ignored). */
  baseUrl: string;
  /**
   * viem local account (e.g. `privateKeyToAccount`, `mnemonicToAccount`) that signs x402
   * payments (EIP-3009 `transferWithAuthorization` of USDC, EIP-712). Without it, a capability
   * that costs money throws {@link PaymentRequiredError}. The account never sends a
   * transaction and needs no ETH; it needs USDC on the payment chain.
   */
  account?: LocalAccount;
  /**
   * Spend limits in USDC (decimal string or number, at most 6 decimals), checked before anything
   * is signed: `perCallUsdc` caps one payment, `totalUsdc` caps the sum of payments made by this
   * client object (in memory; a new client starts from zero). Unset: no limit of that kind.
   */
  spendLimits?: SpendLimits;
  /** fetch implementation (default `globalThis.fetch`). */
  fetch?: typeof globalThis.fetch;
  /**
   * Send an `Idempotency-Key` header (a random UUID per `execute` call unless the call passes
   * one), so a retried request returns the stored execution instead of paying again. Default true.
   */
  idempotency?: boolean;
  /** How long the `/registry` document is reused, milliseconds (default 60 000, as the gateway caches it). */
  registryTtlMs?: number;
  /** CAIP-2 network payments must be made on (default `eip155:8453`, Base, docs/spec-notes.md 2.9). */
  network?: string;
  /**
   * Token contracts payments may use on `network` (default: USDC of that network, `KNOWN_USDC`).
   * A 402 requirement for any other asset is refused before signing.
   */
  assets?: readonly string[];
  /**
   * How many times a paid request is re-sent with the SAME signed payment after a network error,
   * a 409 "payment in progress" or a 503 "verification unavailable" with Retry-After (default 2). The gateway runs and charges a payment once, so
   * re-sending it never pays twice.
   */
  maxRetries?: number;
  /** Extra headers sent with every request (e.g. a tracing header). */
  headers?: Record<string, string>;
  /** x402 schemes to pay with, most preferred first (default `['exact']`); see README "Schemes". */
  schemes?: GatewayContextOptions['schemes'];
  /** Channel state storage: a directory (official file storage) or a `ClientChannelStorage`; default in memory. README "Channels". */
  channelStorage?: GatewayContextOptions['channelStorage'];
  /** Channel deposit size, decimal USDC (default: the 402's `minDeposit`, else 5x the price). */
  channelDepositUsdc?: GatewayContextOptions['channelDepositUsdc'];
  /** Payment chain JSON-RPC URL (reads only: channel recovery, Permit2 allowance for EIP-2612 gas sponsoring). */
  rpcUrl?: string;
}

/** Options of one {@link GatewayClient.execute} call. */
export interface ExecuteOptions {
  /**
   * `Idempotency-Key` for this call (max 200 characters). Reusing a key with the same
   * `capability_id` and `input` returns the stored execution without paying again; reusing it
   * with another body is a 409 {@link GatewayError}. Default: a random UUID (see `idempotency`).
   */
  idempotencyKey?: string;
  /** A live quote (`quote(...)`) for this capability and input: the call pays exactly its price, once. */
  quoteId?: string;
  /** The quote's `price_base_units` as a bigint: the payment ceiling of a quoted call. */
  quotedPrice?: bigint;
  /** Aborts the HTTP requests. An abort after a signed payment was sent counts it as spent. */
  signal?: AbortSignal;
}

/** Options of `jobs.wait`: those of {@link waitForJob} without the job id. */
export type WaitJobOptions = Omit<WaitForJobParameters, 'jobId' | 'accessToken'>;

export type { RegistryReadOptions };

/** A client of one gateway. Create it with {@link createGatewayClient}. */
export interface GatewayClient {
  /** The gateway base URL, without a trailing `/`. */
  readonly baseUrl: string;
  /** Address of the paying account, if any. */
  readonly address: `0x${string}` | undefined;
  /** Spend limits in integer USDC base units (undefined: no limit). */
  readonly spendLimits: { perCallBaseUnits: bigint | undefined; totalBaseUnits: bigint | undefined };
  /**
   * The `GET /registry` document (cached for `registryTtlMs`; `{refresh: true}` refetches).
   * Throws {@link GatewayRequestError} when the gateway cannot be reached, {@link GatewayError}
   * on an error status.
   */
  registry(opts?: RegistryReadOptions): Promise<Registry>;
  /** Every capability the gateway lists (docs/spec-notes.md 2.3 entries: id, status, price, x402 terms, schemas...). Errors as {@link GatewayClient.registry}. */
  capabilities(opts?: RegistryReadOptions): Promise<Capability[]>;
  /**
   * One capability by id. When it is not in the cached registry, the registry is fetched again
   * once; then throws {@link UnknownCapabilityError}.
   */
  capability(id: string, opts?: RegistryReadOptions): Promise<Capability>;
  /**
   * Runs a capability: `POST /api/v1/execute {capability_id, input}` (docs/spec-notes.md 2.7).
   *
   * On a 402 challenge with an `account`: picks the requirement that matches the registry's x402
   * terms for the capability (else {@link PaymentTermsMismatchError}), checks the spend limits
   * (else {@link SpendLimitExceededError}), and only then signs with the official x402 client
   * (`@x402/core` client + the `@x402/evm` client scheme of the chosen requirement) and retries with `PAYMENT-SIGNATURE`.
   *
   * Returns `{execution_id, status: "SUCCEEDED", result, payment: {tx_hash, amount}}` where
   * `amount` is an integer string of USDC base units (6 decimals).
   *
   * Throws {@link UnknownCapabilityError} (not in /registry, or 404), {@link PaymentRequiredError}
   * (402 without an account, or the payment was refused), {@link SpendLimitExceededError},
   * {@link PaymentTermsMismatchError}, {@link GatewayError} (400 bad input with `errors`, 409,
   * 422, 502/503 failed after payment with `executionId` and `refund`), {@link GatewayRequestError}
   * (unreachable; `paymentOutcome: "unknown"` when a signed payment got no answer).
   */
  execute<TResult = Record<string, unknown>>(capabilityId: string, input: Record<string, unknown>, opts?: ExecuteOptions): Promise<Execution<TResult>>;
  /** `GET /api/v1/executions/{id}`: a stored execution with its refund state. Throws {@link GatewayError} (404 unknown id). */
  getExecution<TResult = Record<string, unknown>>(executionId: string): Promise<ExecutionRecord<TResult>>;
  /**
   * `POST /api/v1/quotes`: a signed price and provider for this capability and input, held until
   * `expires_at`; then `execute(id, input, { quoteId, quotedPrice: BigInt(q.price_base_units) })`.
   */
  quote(capabilityId: string, input: Record<string, unknown>, routing?: QuoteParameters['routing']): Promise<QuoteReturnType>;
  /**
   * What this client has paid: `baseUnits` (bigint, USDC base units), `usdc` (decimal string) and
   * `pendingBaseUnits` (payments in flight). A payment counts once the gateway took it: success,
   * a failure after settlement (refunded later on-chain, still counted), or an unknown outcome.
   * Payments the gateway refused before settlement are not counted.
   */
  spent(): SpendTotals;
  /**
   * Sign-In with Ethereum: `signIn(account?)` (default: the client's account) gets a bearer token
   * that the client then uses for bearer-billed calls (wallet monitor, liquidation search).
   */
  auth: { signIn(account?: LocalAccount): Promise<BearerToken>; token(): BearerToken | undefined; signOut(): Promise<void> };
  /** Wallet monitor subscriptions (bearer: sign in first, or pass `accessToken`). */
  walletMonitor: WalletMonitorClient;
  /** Bundle submission signed the Flashbots way with the account (needs `account`). */
  builder: BuilderClient;
  /** The liquidation search and plans: bearer-billed with `accessToken`, else x402 per call with `account`, within the spend limits. */
  liquidations: LiquidationsClient;
  /**
   * Bundles from plans: `send(plan, signer, opts)` signs the plan's transactions with `signer` (a
   * viem local account or wallet client; the plan's searcher) and sends them with `eth_sendBundle`
   * for `plan.target_block` to the builder (`builderRpcUrl`, else the `builder.send_bundle` endpoint
   * of /registry), the request signed the Flashbots way by `opts.authSigner`, else the signer, else
   * the client's account. Nonce: `opts.nonce` or read from `opts.ethereumRpcUrl`. See {@link sendPlanBundle}.
   */
  bundles: { send(plan: LiquidationPlan, signer: PlanSigner, opts?: SendPlanOptions): Promise<SendBundleReturnType & { txs: `0x${string}`[] }> };
  /**
   * Tops up the metered account of the paying address: `POST /v1/account/deposit`, paid with x402
   * (the payment is exactly `amount_usdc`, within the spend limits). See {@link deposit}.
   */
  deposit(params: DepositParameters): Promise<DepositReturnType>;
  /** `GET /v1/account` with the bearer token (sign in first): balance and usage in USDC base units. */
  account(): Promise<AccountView>;
  /**
   * Third-party providers (docs/decisions.md "Providers"). `onboard` registers the account (default: the
   * client's) as a provider with its endpoint and offers, or updates its existing registration;
   * see {@link onboardProvider}.
   */
  providers: { onboard(params: OnboardProviderParameters): Promise<OnboardProviderReturnType> };
  /**
   * MCP with x402 (the gateway's `{base_url}/mcp`): `callTool(mcpClient, {name, arguments})` calls
   * a tool with a connected MCP client (e.g. `@modelcontextprotocol/sdk` `Client` +
   * `StreamableHTTPClientTransport`) and pays its x402 PaymentRequired with this client's account,
   * within its spend limits and counted in `spent()`. See {@link callPaidTool}.
   */
  mcp: { callTool(client: CallPaidToolParameters['client'], params: Omit<CallPaidToolParameters, 'client'>): Promise<McpToolResult> };
  /**
   * Batch-settlement channels (README "Channels"), each named by a paid request whose 402 offers
   * `batch-settlement` (`{path, method?, body?}`, e.g. `{path: '/api/v1/execute', body: JSON.stringify({capability_id, input})}`):
   * `get` what the client knows of it, `topUp({amountUsdc})` (the next channel payment deposits that
   * much more), `refund` (cooperative: what is not charged comes back; `amountUsdc` for part of it).
   * Opening and automatic top-ups happen inside paid calls when `schemes` includes `batch-settlement`.
   */
  channels: {
    get(request: ChannelRequestParameters): Promise<ChannelInfo>;
    topUp(params: { amountUsdc: string | number }): void;
    refund(request: ChannelRequestParameters & { amountUsdc?: string | number }): Promise<RefundChannelReturnType>;
  };
  /** Asynchronous jobs with a USDC budget (docs/spec-notes.md 2.8, docs/decisions.md "Jobs"). */
  jobs: {
    create(request: JobRequest, opts?: ExecuteOptions): Promise<JobCreated>;
    get(jobId: string): Promise<JobRecord>;
    wait(jobId: string, opts?: WaitJobOptions): Promise<JobRecord>;
    cancel(jobId: string): Promise<{ job_id: string; status: string; cancel_requested: true }>;
  };
}

/**
 * Creates a client of the agent capability gateway at `options.baseUrl`.
 *
 * ```ts
 * const gw = createGatewayClient({ baseUrl: 'http://127.0.0.1:8080', account, spendLimits: { perCallUsdc: '0.01', totalUsdc: '0.05' } });
 * const caps = await gw.capabilities();
 * const exe = await gw.execute('intelligence.wallet_balances', { address: account.address });
 * console.log(exe.result, exe.payment.tx_hash, gw.spent().usdc);
 * ```
 *
 * Throws {@link InvalidAmountError} for a malformed spend limit, TypeError for a missing `baseUrl`
 * or no fetch implementation.
 */
export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const ctx: GatewayContext = createGatewayContext(options as GatewayClientOptions, 'createGatewayClient');
  const { account, ledger } = ctx;

  async function builderClient(): Promise<BuilderClient> {
    if (!account) throw new AcgError('Bundle submission signs with the account: pass `account` to createGatewayClient.');
    const rpcUrl = options.builderRpcUrl ?? (await ctx.registry.capability('builder.send_bundle')).endpoint;
    return createBuilderClient({ rpcUrl, account, fetch: options.fetch });
  }
  const builder: BuilderClient = {
    sendBundle: async (txs, blockNumber, opts) => (await builderClient()).sendBundle(txs, blockNumber, opts),
    cancelBundle: async (uuid, opts) => (await builderClient()).cancelBundle(uuid, opts),
    callBundle: async (txs, blockNumber, opts) => (await builderClient()).callBundle(txs, blockNumber, opts),
    mevSendBundle: async (bundle, opts) => (await builderClient()).mevSendBundle(bundle, opts),
    getBundleStats: async (bundleHash, blockNumber, opts) => (await builderClient()).getBundleStats(bundleHash, blockNumber, opts),
  };
  let token: BearerToken | undefined;
  // Sign-In with Ethereum's token, else the session a payment's sign-in-with-x brought (signInWithX.ts)
  const live = (t: BearerToken | undefined) => (t && t.expires_at - 30_000 > Date.now() ? t : undefined);
  const currentToken = () => live(token ?? ctx.session.token);
  const bearer = () => currentToken()?.access_token ?? options.accessToken;
  // The metered account pays a liquidation search only when the caller chose it: a Sign-In with
  // Ethereum token or `accessToken`. The session a payment's sign-in-with-x brought is for reading
  // the payer's own results; debiting an account nobody deposited into would answer 402 where the
  // client can pay per call (README "Liquidation search").
  // only the payer may read an execution or a job: sign in with the client's account on first use
  const payerBearer = async () => {
    if (!bearer() && account) token = await signIn(ctx, { account });
    return bearer();
  };
  const meteredBearer = () => live(token)?.access_token ?? options.accessToken;
  const auth = {
    signIn: async (who?: LocalAccount) => (token = await signIn(ctx, { account: who })),
    token: currentToken,
    signOut: async () => {
      const current = token ?? ctx.session.token;
      if (!current) return;
      token = undefined;
      ctx.session.token = undefined;
      await signOut(ctx, { accessToken: current.access_token });
    },
  };
  const walletMonitor: WalletMonitorClient = {
    subscribe: (req) => subscribe(ctx, { ...req, accessToken: bearer() }),
    get: (subscriptionId) => getSubscription(ctx, { accessToken: bearer(), subscriptionId }),
    cancel: (subscriptionId) => cancelSubscription(ctx, { accessToken: bearer(), subscriptionId }),
    deadLetters: (subscriptionId, opts = {}) => getDeadLetters(ctx, { accessToken: bearer(), subscriptionId, limit: opts.limit }),
    replay: (subscriptionId, webhookIds) => replayDeadLetters(ctx, { accessToken: bearer(), subscriptionId, webhookIds }),
    deliveries: (subscriptionId, opts = {}) => getDeliveries(ctx, { accessToken: bearer(), subscriptionId, limit: opts.limit }),
    sendTestEvent: (subscriptionId) => sendTestEvent(ctx, { accessToken: bearer(), subscriptionId }),
  };
  const liquidations: LiquidationsClient = {
    search: (params = {}, opts = {}) => searchLiquidations(ctx, { ...params, accessToken: meteredBearer(), signal: opts.signal }),
    plan: (opportunity, opts = {}) => planLiquidation(ctx, { opportunity, ...planParams(opts, account?.address), accessToken: meteredBearer() }),
  };
  const bundles = {
    send: async (plan: LiquidationPlan, signer: PlanSigner, opts: SendPlanOptions = {}) => {
      const rpcUrl = options.builderRpcUrl ?? (await ctx.registry.capability('builder.send_bundle')).endpoint;
      const authSigner = opts.authSigner ?? ((signer as { type?: string }).type === 'local' ? undefined : account);
      return sendPlanBundle({ rpcUrl, plan, signer, opts: { fetch: options.fetch, ...opts, ...(authSigner ? { authSigner } : {}) } });
    },
  };

  return {
    baseUrl: ctx.baseUrl,
    address: account?.address,
    auth,
    walletMonitor,
    builder,
    liquidations,
    bundles,
    providers: { onboard: (params) => onboardProvider(ctx, params) },
    mcp: { callTool: (client, params) => callPaidTool(ctx, { ...params, client }) },
    channels: {
      get: (req) => getChannel(ctx, req),
      topUp: (params) => topUpChannel(ctx, params),
      refund: (req) => refundChannel(ctx, req),
    },
    jobs: {
      create: (request, opts = {}) => createJob(ctx, { request, ...opts }),
      get: async (jobId) => getJob(ctx, { jobId, accessToken: await payerBearer() }),
      wait: async (jobId, opts = {}) => waitForJob(ctx, { jobId, ...opts, accessToken: await payerBearer() }),
      cancel: (jobId) => cancelJob(ctx, { jobId }),
    },
    spendLimits: { perCallBaseUnits: ledger.perCallLimit, totalBaseUnits: ledger.totalLimit },
    registry: (opts) => ctx.registry.get(opts),
    capabilities: async (opts) => (await ctx.registry.get(opts)).capabilities,
    capability: (id, opts) => ctx.registry.capability(id, opts),
    execute: (capabilityId, input, opts = {}) => execute(ctx, { capabilityId, input, ...opts }),
    quote: (capabilityId, input, routing) => quote(ctx, { capabilityId, input, ...(routing ? { routing } : {}) }),
    getExecution: async (executionId) => getExecution(ctx, { executionId, accessToken: await payerBearer() }),
    spent: () => ledger.totals(),
    deposit: (params) => deposit(ctx, params),
    account: () => getAccount(ctx, { accessToken: bearer() }),
  };
}
