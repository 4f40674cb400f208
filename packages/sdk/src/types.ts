/**
 * Wire types of the gateway as the SDK sees them. They are declared here (not imported from the
 * gateway's workspace packages) so the published SDK has no runtime or type dependency on them.
 */
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';

export type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse };

/** Capability status in the registry (SPEC 3): only `LIVE` ones have a recorded successful probe. */
export type CapabilityStatus = 'LIVE' | 'PARTIAL' | 'STALE' | 'PLANNED' | 'PILOT';

/** Authentication scheme of a capability (SPEC 2.2 `auth`). */
export type CapabilityAuth = 'none' | 'bearer' | 'bundle_signature' | 'x402' | 'custom';

/** Health of a capability from `/status/health`. */
export type Availability = 'up' | 'degraded' | 'down' | 'planned';

/**
 * x402 payment terms a `/registry` entry advertises (field names as in the 402 challenge):
 * `network` CAIP-2 (`eip155:8453`), `asset` (USDC contract), `payTo` (treasury), `resource`
 * (URL that answers 402) and `maxAmountRequired` (integer string, USDC base units) when the
 * price is fixed.
 */
export interface RegistryX402Terms {
  x402Version: 2;
  scheme: 'exact';
  network: string;
  asset: `0x${string}`;
  payTo: `0x${string}`;
  resource: string;
  maxAmountRequired?: string;
}

/**
 * One capability of `GET /registry` (SPEC 2.3). Prices: `price` is a decimal string in USDC
 * (`"0.001"`), `price_base_units` an integer string in USDC base units (6 decimals, `"1000"`);
 * both null when the price is not fixed. Latencies are milliseconds (null before the first sample).
 * `input_schema` / `output_schema` are JSON Schema 2020-12 objects describing `input` / `result`.
 */
export interface Capability {
  id: string;
  product: string;
  name: string;
  description?: string;
  status: CapabilityStatus;
  surface: string;
  /** URL to call (for executable capabilities `{base_url}/api/v1/execute`). */
  endpoint: string;
  method: 'GET' | 'POST';
  auth: CapabilityAuth;
  provider: string;
  docs_url?: string | null;
  related_capabilities?: string[];
  evidence: { source: string; checked_at?: string; probe?: Record<string, unknown>; advertised_by?: string; next_action?: string };
  notes?: string;
  /** decimal string, USDC (e.g. `"0.001"`), or null when not fixed */
  price: string | null;
  /** integer string, USDC base units (6 decimals, e.g. `"1000"`), or null when not fixed */
  price_base_units: string | null;
  /** what one price buys: `call`, `event` or `bundle` */
  price_unit: 'call' | 'event' | 'bundle' | null;
  currency: 'USDC';
  /** milliseconds, null before the first sample */
  latency_ms_p50: number | null;
  /** milliseconds, null before the first sample */
  latency_ms_p99: number | null;
  authentication: CapabilityAuth;
  /** x402 payment terms, null when the capability takes no x402 payment (yet) */
  x402: RegistryX402Terms | null;
  input_schema: Record<string, unknown> | null;
  output_schema: Record<string, unknown> | null;
  availability: Availability | null;
  example_request: unknown;
  example_response: unknown;
  [key: string]: unknown;
}

/** The `GET /registry` document (SPEC 4 "legacy registry"). */
export interface Registry {
  /** SemVer of the file format. */
  registry_version: string;
  /** RFC 3339 UTC time of generation. */
  generated_at: string;
  network: {
    organization: string;
    domains: { discover: string; execute: string; intelligence: string };
    operational_status: 'ok' | 'degraded' | 'outage';
    operational_status_source: string;
  };
  capabilities: Capability[];
}

/**
 * Settled payment behind an execution (SPEC 2.7): `tx_hash` of the on-chain USDC transfer and
 * `amount` charged, an integer string in USDC base units (6 decimals, `"1000"` = 0.001 USDC).
 */
export interface ExecutionPayment {
  tx_hash: `0x${string}`;
  /** integer string, USDC base units (6 decimals) */
  amount: string;
}

/** Result of a successful `execute` (SPEC 2.7): `{execution_id, status: "SUCCEEDED", result, payment}`. */
export interface Execution<TResult = Record<string, unknown>> {
  /** `exe_` + ULID */
  execution_id: string;
  status: 'SUCCEEDED';
  /** capability output, shaped by the capability's `output_schema` */
  result: TResult;
  payment: ExecutionPayment;
}

/** Refund of a payment whose capability failed: `amount` integer string, USDC base units. */
export interface RefundInfo {
  status: 'pending' | 'sent' | (string & {});
  tx_hash?: `0x${string}`;
  /** integer string, USDC base units */
  amount: string;
}

/** A stored execution, as `GET /api/v1/executions/{id}` returns it. */
export interface ExecutionRecord<TResult = Record<string, unknown>> {
  execution_id: string;
  capability_id: string;
  status: 'SUCCEEDED' | 'FAILED';
  result: TResult | null;
  /** why it failed (FAILED only): stable snake_case `code` and a message */
  error?: { code: string; message: string };
  payment: ExecutionPayment;
  /** present once a failed execution's refund was queued or sent */
  refund?: RefundInfo;
  /** RFC 3339 UTC */
  created_at: string;
  /** RFC 3339 UTC */
  finished_at: string;
  /** capability run time, milliseconds */
  duration_ms?: number;
  [key: string]: unknown;
}

/** One validation issue of a 400 problem: `path` from the request body root (e.g. `["input","address"]`). */
export interface ProblemIssue {
  path: (string | number)[];
  message: string;
  code?: string;
}

/** RFC 9457 problem details: the body of every gateway error except 402. Extension members allowed. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: ProblemIssue[];
  [key: string]: unknown;
}

/** How much a client has paid: integer USDC base units and the same as a decimal USDC string. */
export interface SpendTotals {
  /** integer, USDC base units (6 decimals) */
  baseUnits: bigint;
  /** decimal string, USDC (e.g. `"0.002"`) */
  usdc: string;
  /** integer, USDC base units reserved by payments still in flight */
  pendingBaseUnits: bigint;
}

/** `POST /api/v1/jobs` body (SPEC 2.8, DESIGN "Jobs"). `budget_usdc`: whole USDC, at most 6 decimals. */
export interface JobRequest {
  objective: string;
  budget_usdc: number;
  capabilities: string[];
  steps?: { capability_id: string; input: Record<string, unknown> }[];
}

/** 202 answer of `POST /api/v1/jobs`. */
export interface JobCreated {
  job_id: string;
  status: 'queued';
  poll_url: string;
}

/** The job record of `GET /api/v1/jobs/{id}`; `*_base_units` are integer strings of USDC base units. */
export interface JobRecord {
  job_id: string;
  objective: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'budget_exhausted';
  budget_usdc: number;
  spent_usdc: number;
  budget_base_units: string;
  spent_base_units: string;
  capabilities: string[];
  steps: {
    capability_id: string;
    input: Record<string, unknown>;
    execution_id: string | null;
    status: 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';
    cost_usdc: number;
    cost_base_units: string;
    attempts: number;
    started_at: string | null;
    finished_at: string | null;
    result: Record<string, unknown> | null;
    error: { code: string; message: string } | null;
  }[];
  result: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
  payer: string;
  payment: { tx_hash: string; amount: string };
  cancel_requested: boolean;
  created_at: string;
  updated_at: string;
  refund: { status: 'pending' | 'sent'; amount: string; tx_hash?: string } | null;
}

/** Lending protocols searched. */
export type LendingProtocol = 'aave_v3' | 'spark' | 'compound_v3' | 'morpho_blue';

/** Query of {@link LiquidationsClient.search} (GET /v1/liquidation-search; every field optional). */
export interface LiquidationSearchParams {
  /** Minimum estimated profit net of gas, USD (default 0). */
  min_profit_usd?: number;
  /** `ethereum` (default), `base` or `arbitrum`. */
  chain?: 'ethereum' | 'base' | 'arbitrum';
  /** One protocol or several (default: all four). */
  protocol?: LendingProtocol | LendingProtocol[];
  /** Unitless, (0, 1.1]; default 1.0 = liquidatable now. */
  max_health_factor?: number;
  /** 1..500, default 50. */
  limit?: number;
}

/** One opportunity (SPEC 2.5 with DESIGN's types). USD amounts are numbers; base units are strings. */
export interface LiquidationOpportunity {
  protocol: LendingProtocol;
  borrower: `0x${string}`;
  collateral_token: `0x${string}`;
  collateral_symbol: string;
  debt_token: `0x${string}`;
  debt_symbol: string;
  collateral_usd: number;
  debt_usd: number;
  /** Unitless; < 1 means liquidatable now. */
  health_factor: number;
  /** USD, net of gas at the block's base fee. */
  estimated_profit_usd: number;
  /** Block by which the liquidation must land to be valid on the state read. */
  deadline_block: number;
  /** Contract to call (Aave/Spark Pool, Comet, Morpho Blue). */
  market?: `0x${string}`;
  /** Morpho Blue market id. */
  market_id?: `0x${string}`;
  /** Debt one liquidation may repay, integer string in debt-token base units. */
  max_repay_amount?: string;
  max_repay_usd?: number;
  gas_cost_usd?: number;
}

/** Answer of {@link LiquidationsClient.search}. */
export interface LiquidationSearchResult {
  chain: string;
  block_number: number;
  opportunities: LiquidationOpportunity[];
}

/** Chains the wallet monitor watches. */
export type WalletMonitorChain = 'ethereum' | 'base' | 'arbitrum';
/** Subscribable events. */
export type WalletEventType = 'transfer_in' | 'transfer_out';

/** Body of `POST /v1/wallet-monitor` (SPEC 2.6). */
export interface SubscribeRequest {
  /** 1 to 1,000 addresses, EIP-55 checksummed or all lowercase */
  addresses: string[];
  chains: WalletMonitorChain[];
  events: WalletEventType[];
  /** https URL (http only to a loopback host on a development gateway) */
  webhook_url: string;
}

/** A created subscription. Keep `secret`: it is shown only once and verifies every webhook ({@link verifyWebhook}). */
export interface SubscriptionCreated {
  /** `sub_` + ULID */
  subscription_id: string;
  /** UNIX seconds; renewed by 30 days while the metered account holds at least 0.001 USDC */
  expires_at: number;
  /** `whsec_...` Standard Webhooks signing secret */
  secret: string;
}

/** `GET /v1/wallet-monitor/{id}`: status, expiry (UNIX seconds) and delivery stats (`billed` in integer USDC base units). */
export interface Subscription {
  subscription_id: string;
  status: 'active' | 'expired' | 'cancelled';
  addresses: `0x${string}`[];
  chains: WalletMonitorChain[];
  events: WalletEventType[];
  webhook_url: string;
  created_at: number;
  expires_at: number;
  cancelled_at: number | null;
  renewals: number;
  delivery: {
    events: number;
    delivered: number;
    pending: number;
    failed_attempts: number;
    dead_lettered: number;
    dropped: number;
    billed: string;
    last_delivery_at: string | null;
    last_status: number | null;
  };
}

/** Webhook payload of one wallet event (`amount` and `block_number` are integer strings). */
export interface WalletEvent {
  type: WalletEventType;
  subscription_id: string;
  chain: WalletMonitorChain;
  block_number: string;
  block_hash: `0x${string}`;
  tx_hash: `0x${string}`;
  /** null for native ETH transfers */
  log_index: number | null;
  from: `0x${string}`;
  to: `0x${string}`;
  /** `address` null for native ETH */
  asset: { address: `0x${string}` | null; symbol: string; decimals: number };
  amount: string;
  observed_at: string;
}

/** An event that exhausted its retries. */
export interface DeadLetter {
  webhook_id: string;
  event: WalletEvent;
  attempts: number;
  /** HTTP status of the last attempt, 0 for a network error, null if nothing was sent (e.g. no balance) */
  last_status: number | null;
  last_error: string;
  dead_lettered_at: number;
}

/** A metered account (`GET /v1/account`): amounts are integer strings of USDC base units. */
export interface AccountView {
  address: string;
  /** integer string, USDC base units */
  balance: string;
  /** integer string, USDC base units */
  spent: string;
  /** integer string, USDC base units */
  deposited: string;
  usage: { kind: 'debit' | 'credit'; amount: string; item: string; ref: string; at: string }[];
}

/** Answer of `POST /v1/account/deposit`: the account after the credit and the settled deposit. */
export interface DepositResponse extends AccountView {
  deposit: { amount: string; tx_hash: string };
}
