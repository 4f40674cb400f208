import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { x402Client, x402HTTPClient } from '@x402/fetch';
import type { LocalAccount } from 'viem';
import { AcgError, GatewayError, GatewayRequestError, PaymentRequiredError, PaymentTermsMismatchError, UnknownCapabilityError } from './errors.js';
import { PAYMENT_NETWORK, parseJson, parseProblem, readPaymentRequired, selectRequirement } from './protocol.js';
import { SpendLedger, type SpendLimits, type SpendReservation } from './spend.js';
import type { Capability, Execution, ExecutionRecord, JobCreated, JobRecord, JobRequest, PaymentRequired, PaymentRequirements, Registry, SpendTotals } from './types.js';
import { parseUsdc } from './units.js';
import { createBuilderClient, type BuilderClient } from './builder.js';
import { createLiquidationsClient, type LiquidationsClient } from './liquidations.js';
import { createAuthClient, type BearerToken } from './auth.js';
import { createWalletMonitorClient, type WalletMonitorClient } from './walletMonitor.js';

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
  /** CAIP-2 network payments must be made on (default `eip155:8453`, Base, SPEC 2.9). */
  network?: string;
  /**
   * How many times a paid request is re-sent with the SAME signed payment after a network error
   * or a 409 "payment in progress" (default 2). The gateway runs and charges a payment once, so
   * re-sending it never pays twice.
   */
  maxRetries?: number;
  /** Extra headers sent with every request (e.g. a tracing header). */
  headers?: Record<string, string>;
}

/** Options of one {@link GatewayClient.execute} call. */
export interface ExecuteOptions {
  /**
   * `Idempotency-Key` for this call (max 200 characters). Reusing a key with the same
   * `capability_id` and `input` returns the stored execution without paying again; reusing it
   * with another body is a 409 {@link GatewayError}. Default: a random UUID (see `idempotency`).
   */
  idempotencyKey?: string;
  /** Aborts the HTTP requests. An abort after a signed payment was sent counts it as spent. */
  signal?: AbortSignal;
}

/** Options of registry reads. */
/** Options of `jobs.wait`. */
export interface WaitJobOptions {
  /** first poll interval, ms (default 500); doubles up to `maxIntervalMs` */
  intervalMs?: number;
  /** default 5 000 ms */
  maxIntervalMs?: number;
  /** default 10 minutes */
  timeoutMs?: number;
  /** keep polling until the refund of unspent budget is sent (default true) */
  waitForRefund?: boolean;
  onProgress?(job: JobRecord): void;
  signal?: AbortSignal;
}

export interface RegistryReadOptions {
  /** Fetch `/registry` again instead of using the cached copy. */
  refresh?: boolean;
}

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
  /** Every capability the gateway lists (SPEC 2.3 entries: id, status, price, x402 terms, schemas...). Errors as {@link GatewayClient.registry}. */
  capabilities(opts?: RegistryReadOptions): Promise<Capability[]>;
  /**
   * One capability by id. When it is not in the cached registry, the registry is fetched again
   * once; then throws {@link UnknownCapabilityError}.
   */
  capability(id: string, opts?: RegistryReadOptions): Promise<Capability>;
  /**
   * Runs a capability: `POST /api/v1/execute {capability_id, input}` (SPEC 2.7).
   *
   * On a 402 challenge with an `account`: picks the requirement that matches the registry's x402
   * terms for the capability (else {@link PaymentTermsMismatchError}), checks the spend limits
   * (else {@link SpendLimitExceededError}), and only then signs with the official x402 client
   * (`@x402/core` client + `@x402/evm` exact scheme) and retries with `PAYMENT-SIGNATURE`.
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
  /** The liquidation search: bearer-billed with `accessToken`, else x402 per query with `account`, within the spend limits. */
  liquidations: LiquidationsClient;
  /** Asynchronous jobs with a USDC budget (SPEC 2.8, DESIGN "Jobs"). */
  jobs: {
    create(request: JobRequest, opts?: ExecuteOptions): Promise<JobCreated>;
    get(jobId: string): Promise<JobRecord>;
    wait(jobId: string, opts?: WaitJobOptions): Promise<JobRecord>;
    cancel(jobId: string): Promise<{ job_id: string; status: string; cancel_requested: true }>;
  };
}

interface SendResult {
  response: Response;
  text: string;
}

const DEFAULT_REGISTRY_TTL_MS = 60_000;
const MAX_RETRY_AFTER_MS = 5_000;

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
  if (!options || typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl)) {
    throw new TypeError('createGatewayClient: baseUrl must be an http(s) URL, e.g. "http://127.0.0.1:8080"');
  }
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch;
  if (typeof doFetch !== 'function') throw new TypeError('createGatewayClient: no fetch implementation; pass options.fetch');
  const account = options.account;
  const ledger = new SpendLedger(options.spendLimits);
  const ttl = options.registryTtlMs ?? DEFAULT_REGISTRY_TTL_MS;
  const network = options.network ?? PAYMENT_NETWORK;
  const maxRetries = Math.max(0, options.maxRetries ?? 2);
  const idempotency = options.idempotency ?? true;
  const extraHeaders = options.headers ?? {};

  let cached: { doc: Registry; at: number } | undefined;
  let inflight: Promise<Registry> | undefined;

  async function send(path: string, init: RequestInit & { headers?: Record<string, string> }): Promise<SendResult> {
    const url = `${baseUrl}${path}`;
    let response: Response;
    try {
      response = await doFetch(url, { ...init, headers: { accept: 'application/json', ...extraHeaders, ...init.headers } });
    } catch (cause) {
      throw new GatewayRequestError(url, `Could not reach the gateway at ${baseUrl}.`, { cause });
    }
    let text: string;
    try {
      text = await response.text();
    } catch (cause) {
      throw new GatewayRequestError(url, `The gateway's answer to ${path} could not be read.`, { cause, status: response.status });
    }
    return { response, text };
  }

  function jsonOf<T>(path: string, r: SendResult): T {
    const body = parseJson(r.text);
    if (body === undefined) {
      throw new GatewayRequestError(`${baseUrl}${path}`, `The gateway answered ${path} with HTTP ${r.response.status} but no JSON body.`, {
        status: r.response.status,
      });
    }
    return body as T;
  }

  async function fetchRegistry(): Promise<Registry> {
    const r = await send('/registry', { method: 'GET' });
    if (!r.response.ok) throw new GatewayError(parseProblem(r.response.status, r.text));
    const doc = jsonOf<Registry>('/registry', r);
    if (!doc || !Array.isArray(doc.capabilities)) {
      throw new GatewayRequestError(`${baseUrl}/registry`, 'The gateway /registry document has no capabilities array.', { status: r.response.status });
    }
    cached = { doc, at: Date.now() };
    return doc;
  }

  async function registry(opts: RegistryReadOptions = {}): Promise<Registry> {
    if (!opts.refresh && cached && Date.now() - cached.at < ttl) return cached.doc;
    inflight ??= fetchRegistry().finally(() => {
      inflight = undefined;
    });
    return inflight;
  }

  async function capability(id: string, opts: RegistryReadOptions = {}): Promise<Capability> {
    const wasCached = !opts.refresh && cached !== undefined && Date.now() - cached.at < ttl;
    let doc = await registry(opts);
    let found = doc.capabilities.find((c) => c.id === id);
    if (!found && wasCached) {
      doc = await registry({ refresh: true });
      found = doc.capabilities.find((c) => c.id === id);
    }
    if (!found) throw new UnknownCapabilityError(id, { available: doc.capabilities.map((c) => c.id) });
    return found;
  }

  /** Requirement of the challenge that the registry vouches for; refetches the registry once on mismatch. */
  async function vouchedRequirement(cap: Capability, pr: PaymentRequired): Promise<{ requirement: PaymentRequirements; amount: bigint }> {
    try {
      return selectRequirement(cap, pr, { network });
    } catch (e) {
      if (!(e instanceof PaymentTermsMismatchError)) throw e;
      // The gateway may have changed its terms since the registry was cached: check once more.
      return selectRequirement(await capability(cap.id, { refresh: true }), pr, { network });
    }
  }

  async function sign(pr: PaymentRequired, requirement: PaymentRequirements, amount: bigint): Promise<Record<string, string>> {
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: account!, networks: [requirement.network] });
    // Defence in depth: the official client itself refuses anything but this asset at this amount.
    client.setSpendControls({
      maxAmountPerPayment: false,
      allowedAssets: [{ network: requirement.network, asset: requirement.asset, maxAmountPerPayment: amount.toString() }],
    });
    try {
      const payload = await client.createPaymentPayload({ ...pr, accepts: [requirement] });
      return new x402HTTPClient(client).encodePaymentSignatureHeader(payload);
    } catch (cause) {
      throw new AcgError('Could not sign the x402 payment with the given account; nothing was paid.', { cause, details: (cause as Error)?.message });
    }
  }

  function throwForStatus(capabilityId: string, r: SendResult): never {
    const problem = parseProblem(r.response.status, r.text);
    if (r.response.status === 404 && /capabilit/i.test(problem.detail)) throw new UnknownCapabilityError(capabilityId, { problem });
    throw new GatewayError(problem);
  }

  function asExecution<TResult>(r: SendResult): Execution<TResult> {
    const body = jsonOf<Execution<TResult>>('/api/v1/execute', r);
    if (!body || typeof body.execution_id !== 'string' || body.status !== 'SUCCEEDED') {
      throw new GatewayRequestError(`${baseUrl}/api/v1/execute`, 'The gateway answered execute with an unexpected body.', { status: r.response.status });
    }
    return body;
  }

  /** Sends the signed payment, re-sending the same one after a network error or 409 in progress. */
  async function sendPaid(
    capabilityId: string,
    headers: Record<string, string>,
    body: string,
    reservation: SpendReservation,
    signal: AbortSignal | undefined,
    path = '/api/v1/execute',
  ): Promise<SendResult> {
    for (let attempt = 0; ; attempt++) {
      let r: SendResult;
      try {
        r = await send(path, { method: 'POST', headers, body, signal });
      } catch (e) {
        if (attempt < maxRetries && !signal?.aborted) continue;
        reservation.commit(); // the gateway may have settled it: keep it counted
        const cause = (e as GatewayRequestError).cause ?? e;
        throw new GatewayRequestError(`${baseUrl}${path}`, `No answer from the gateway after sending a signed payment for "${capabilityId}".`, {
          cause,
          paymentOutcome: 'unknown',
        });
      }
      const status = r.response.status;
      const retryAfter = r.response.headers.get('retry-after');
      if (status === 409 && retryAfter !== null) {
        // The same payment is being settled by an earlier attempt: ask again for its result.
        if (attempt < maxRetries && !signal?.aborted) {
          const seconds = Number(retryAfter);
          await sleep(Number.isFinite(seconds) && seconds >= 0 ? Math.min(MAX_RETRY_AFTER_MS, seconds * 1000) : 1000);
          continue;
        }
        reservation.commit();
        throwForStatus(capabilityId, r);
      }
      return r;
    }
  }

  async function execute<TResult>(capabilityId: string, input: Record<string, unknown>, opts: ExecuteOptions = {}): Promise<Execution<TResult>> {
    const cap = await capability(capabilityId);
    const key = opts.idempotencyKey ?? (idempotency ? globalThis.crypto.randomUUID() : undefined);
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) };
    const body = JSON.stringify({ capability_id: capabilityId, input });

    const first = await send('/api/v1/execute', { method: 'POST', headers, body, signal: opts.signal });
    if (first.response.ok) return asExecution<TResult>(first); // free, or a replay of a stored execution
    if (first.response.status !== 402) throwForStatus(capabilityId, first);

    const challenge = parseJson(first.text) as Record<string, unknown> | undefined;
    const pr = readPaymentRequired(first.response.headers.get('payment-required'), challenge);
    if (!pr) {
      throw new GatewayRequestError(`${baseUrl}/api/v1/execute`, 'The gateway answered 402 without a readable x402 PaymentRequired.', { status: 402 });
    }
    if (!account) throw new PaymentRequiredError(capabilityId, pr, { challenge });

    const { requirement, amount } = await vouchedRequirement(cap, pr);
    const reservation = ledger.reserve(amount, capabilityId); // throws SpendLimitExceededError
    let paymentHeaders: Record<string, string>;
    try {
      paymentHeaders = await sign(pr, requirement, amount);
    } catch (e) {
      reservation.release();
      throw e;
    }

    const r = await sendPaid(capabilityId, { ...headers, ...paymentHeaders }, body, reservation, opts.signal);
    const status = r.response.status;
    if (r.response.ok) {
      reservation.commit();
      return asExecution<TResult>(r);
    }
    if (status === 402) {
      reservation.release(); // refused before settlement: nothing charged
      const refusal = parseJson(r.text) as Record<string, unknown> | undefined;
      const refusedPr = readPaymentRequired(r.response.headers.get('payment-required'), refusal) ?? pr;
      throw new PaymentRequiredError(capabilityId, refusedPr, {
        challenge: refusal,
        reason: typeof refusal?.reason === 'string' ? refusal.reason : undefined,
        refused: true,
      });
    }
    const problem = parseProblem(status, r.text);
    // Charged when the capability failed after settlement (refund follows) or the outcome is unclear (5xx).
    if (status >= 500 || problem.execution_id !== undefined || problem.refund !== undefined) reservation.commit();
    else reservation.release();
    throwForStatus(capabilityId, r);
  }

  async function getExecution<TResult>(executionId: string): Promise<ExecutionRecord<TResult>> {
    const path = `/api/v1/executions/${encodeURIComponent(executionId)}`;
    const r = await send(path, { method: 'GET' });
    if (!r.response.ok) throw new GatewayError(parseProblem(r.response.status, r.text));
    return jsonOf<ExecutionRecord<TResult>>(path, r);
  }

  /**
   * Creates a job (SPEC 2.8): the plan is checked by the gateway first (400/422 cost nothing), then
   * the whole budget is paid with x402 (exactly `budget_usdc`, within the spend limits, terms
   * checked against the registry's `gateway.jobs` entry); the unspent budget is refunded on-chain
   * when the job ends. Returns `{job_id, status: "queued", poll_url}`.
   */
  async function createJob(request: JobRequest, opts: ExecuteOptions = {}): Promise<JobCreated> {
    const path = '/api/v1/jobs';
    const key = opts.idempotencyKey ?? (idempotency ? globalThis.crypto.randomUUID() : undefined);
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) };
    const body = JSON.stringify(request);
    const budget = parseUsdc(request.budget_usdc);
    const first = await send(path, { method: 'POST', headers, body, signal: opts.signal });
    if (first.response.status === 202) return jsonOf<JobCreated>(path, first);
    if (first.response.status !== 402) throw new GatewayError(parseProblem(first.response.status, first.text));
    const challenge = parseJson(first.text) as Record<string, unknown> | undefined;
    const pr = readPaymentRequired(first.response.headers.get('payment-required'), challenge);
    if (!pr) throw new GatewayRequestError(`${baseUrl}${path}`, 'The gateway answered 402 without a readable x402 PaymentRequired.', { status: 402 });
    if (!account) throw new PaymentRequiredError('gateway.jobs', pr, { challenge });
    const cap = await capability('gateway.jobs');
    const { requirement, amount } = selectRequirement(cap, pr, { network });
    if (amount !== budget) {
      throw new PaymentTermsMismatchError('gateway.jobs', pr.accepts, [`the challenge asks ${amount} base units, the budget is ${budget}`]);
    }
    const reservation = ledger.reserve(amount, 'gateway.jobs');
    let paymentHeaders: Record<string, string>;
    try {
      paymentHeaders = await sign(pr, requirement, amount);
    } catch (e) {
      reservation.release();
      throw e;
    }
    const r = await sendPaid('gateway.jobs', { ...headers, ...paymentHeaders }, body, reservation, opts.signal, path);
    if (r.response.status === 202) {
      reservation.commit();
      return jsonOf<JobCreated>(path, r);
    }
    if (r.response.status === 402 || r.response.status < 500) reservation.release();
    else reservation.commit();
    throw new GatewayError(parseProblem(r.response.status, r.text));
  }

  async function getJob(jobId: string): Promise<JobRecord> {
    const path = `/api/v1/jobs/${encodeURIComponent(jobId)}`;
    const r = await send(path, { method: 'GET' });
    if (!r.response.ok) throw new GatewayError(parseProblem(r.response.status, r.text));
    return jsonOf<JobRecord>(path, r);
  }

  /**
   * Polls a job until it ends (`succeeded | failed | cancelled | budget_exhausted`) and, when
   * budget is left, until its refund is sent; backoff from `intervalMs` (500) doubling to
   * `maxIntervalMs` (5 000). `onProgress` gets every record that changed. Throws
   * GatewayRequestError after `timeoutMs` (default 10 minutes).
   */
  async function waitJob(jobId: string, opts: WaitJobOptions = {}): Promise<JobRecord> {
    const deadline = Date.now() + (opts.timeoutMs ?? 600_000);
    let delay = opts.intervalMs ?? 500;
    let last = '';
    for (;;) {
      const job = await getJob(jobId);
      const seen = `${job.status}:${job.updated_at}:${job.refund?.status ?? ''}`;
      if (seen !== last) {
        last = seen;
        opts.onProgress?.(job);
      }
      const ended = JOB_END_STATES.has(job.status);
      if (ended && (!job.refund || job.refund.status === 'sent' || opts.waitForRefund === false)) return job;
      if (Date.now() > deadline || opts.signal?.aborted) {
        throw new GatewayRequestError(`${baseUrl}/api/v1/jobs/${jobId}`, `Job ${jobId} did not end within the wait (last status ${job.status}).`, {});
      }
      await sleep(delay);
      delay = Math.min(opts.maxIntervalMs ?? 5_000, delay * 2);
    }
  }

  /** Asks to cancel a job before its next step; proves the payer by signing "Cancel job <id>" with the account. */
  async function cancelJob(jobId: string): Promise<{ job_id: string; status: string; cancel_requested: true }> {
    if (!account) throw new AcgError('Cancelling a job needs the account that paid its budget.');
    const path = `/api/v1/jobs/${encodeURIComponent(jobId)}/cancel`;
    const signature = await account.signMessage({ message: `Cancel job ${jobId}` });
    const r = await send(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ signature }) });
    if (!r.response.ok) throw new GatewayError(parseProblem(r.response.status, r.text));
    return jsonOf(path, r);
  }

  async function builderClient(): Promise<BuilderClient> {
    if (!account) throw new AcgError('Bundle submission signs with the account: pass `account` to createGatewayClient.');
    const rpcUrl = options.builderRpcUrl ?? (await capability('builder.send_bundle')).endpoint;
    return createBuilderClient({ rpcUrl, account, fetch: options.fetch });
  }
  const builder: BuilderClient = {
    sendBundle: async (txs, blockNumber, opts) => (await builderClient()).sendBundle(txs, blockNumber, opts),
    cancelBundle: async (uuid, opts) => (await builderClient()).cancelBundle(uuid, opts),
    callBundle: async (txs, blockNumber, opts) => (await builderClient()).callBundle(txs, blockNumber, opts),
  };
  const authClient = createAuthClient({ baseUrl, fetch: options.fetch, headers: extraHeaders });
  const bearer = () => authClient.token()?.access_token ?? options.accessToken;
  const auth = {
    signIn: (who?: LocalAccount) => {
      const signer = who ?? account;
      if (!signer) throw new AcgError('Sign-in signs with an account: pass one to signIn() or to createGatewayClient.');
      return authClient.signIn(signer);
    },
    token: () => authClient.token(),
    signOut: () => authClient.signOut(),
  };
  const walletMonitor = createWalletMonitorClient({ baseUrl, token: bearer, fetch: options.fetch, headers: extraHeaders });
  const liquidations: LiquidationsClient = {
    search: (params, opts) =>
      createLiquidationsClient({ baseUrl, accessToken: bearer(), account, ledger, fetch: options.fetch, headers: extraHeaders }).search(params, opts),
  };

  return {
    baseUrl,
    address: account?.address,
    auth,
    walletMonitor,
    builder,
    liquidations,
    jobs: { create: createJob, get: getJob, wait: waitJob, cancel: cancelJob },
    spendLimits: { perCallBaseUnits: ledger.perCallLimit, totalBaseUnits: ledger.totalLimit },
    registry,
    capabilities: async (opts) => (await registry(opts)).capabilities,
    capability,
    execute,
    getExecution,
    spent: () => ledger.totals(),
  };
}

const JOB_END_STATES = new Set(['succeeded', 'failed', 'cancelled', 'budget_exhausted']);

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
