/**
 * Wire types of the gateway as the SDK sees them. Where `@acg/schemas` defines the shape (a zod
 * schema), the type is that schema's inferred type, expanded into plain TypeScript in
 * `wire/types.generated.ts` (from `wire/schemas.ts`) so the published `.d.ts` needs neither
 * `@acg/schemas` nor zod. Only fields the gateway adds beyond a schema are written here.
 * Units: `price` decimal USDC strings; `amount`, `*_base_units` integer strings of USDC base units
 * (6 decimals); `*_usd` numbers in USD; times RFC 3339 UTC unless named `*_at` in UNIX seconds.
 */
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type * as W from './wire/types.generated.js';

export type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse };

/** Capability status in the registry (docs/spec-notes.md 3): only `LIVE` ones have a recorded successful probe. */
export type CapabilityStatus = W.WireCapabilityStatus;

/** Authentication scheme of a capability (docs/spec-notes.md 2.2 `auth`). */
export type CapabilityAuth = W.WireAuth;

/** Health of a capability from `/status/health`. */
export type Availability = W.WireHealthStatus;

/**
 * x402 payment terms a `/registry` entry advertises (field names as in the 402 challenge):
 * `network` CAIP-2 (`eip155:8453`), `asset` (USDC contract), `payTo` (treasury), `resource`
 * (URL that answers 402) and `maxAmountRequired` (integer string, USDC base units) when the
 * price is fixed. Schema: `LegacyX402Terms`.
 */
export type RegistryX402Terms = W.WireX402Terms;

/**
 * One capability of `GET /registry` (docs/spec-notes.md 2.3; schema `LegacyRegistryEntry`). `price` is a decimal
 * string in USDC (`"0.001"`), `price_base_units` an integer string in USDC base units (`"1000"`);
 * both null when the price is not fixed. Latencies are milliseconds (null before the first sample).
 * `input_schema` / `output_schema` are JSON Schema 2020-12 objects; `x402` null when the
 * capability takes no x402 payment.
 */
export type Capability = W.WireCapability;

/** The `GET /registry` document (docs/spec-notes.md 4 "legacy registry"; schema `LegacyRegistry`). */
export type Registry = W.WireRegistry;

/**
 * Settled payment behind an execution (docs/spec-notes.md 2.7; schema `ExecutionPayment`): `tx_hash` of the
 * on-chain USDC transfer and `amount` charged, an integer string in USDC base units.
 */
export interface ExecutionPayment extends Omit<W.WireExecutionPayment, 'tx_hash'> {
  /** 0x + 64 hex */
  tx_hash: `0x${string}`;
}

/** Result of a successful `execute` (docs/spec-notes.md 2.7; schema `ExecutionSucceeded`), `result` typed by the caller. */
export type Execution<TResult = Record<string, unknown>> = Omit<W.WireExecutionSucceeded, 'result' | 'payment'> & {
  /** capability output, shaped by the capability's `output_schema` */
  result: TResult;
  payment: ExecutionPayment;
};

/** Refund of a payment (schema `Refund`): `status` `pending | sent`, `amount` integer string of USDC base units. */
export type RefundInfo = W.WireRefund;

/**
 * A stored execution, as `GET /api/v1/executions/{id}` returns it (schema `ExecutionRecord`):
 * `result` typed by the caller, `error` when FAILED, `refund` (with its `payer`) once a failed
 * execution's refund was queued or sent, `job_id` when a job step ran it, `duration_ms` milliseconds.
 */
export type ExecutionRecord<TResult = Record<string, unknown>> = Omit<W.WireExecutionRecord, 'result' | 'payment'> & {
  result: TResult | null;
  payment: ExecutionPayment;
};

/** One validation issue of a 400 problem (schema `ProblemIssue`): `path` from the request body root, e.g. `["input","address"]`. */
export type ProblemIssue = W.WireProblemIssue;

/** RFC 9457 problem details (schema `ProblemDetails`): the body of every gateway error except 402. Extension members allowed. */
export type ProblemDetails = W.WireProblemDetails;

/** The JSON body of a 402 (docs/spec-notes.md 2.9 fields + x402 v2 `accepts`; schema `PaymentChallenge`). */
export type PaymentChallenge = W.WirePaymentChallenge;

/** How much a client has paid: integer USDC base units and the same as a decimal USDC string. */
export interface SpendTotals {
  /** integer, USDC base units (6 decimals) */
  baseUnits: bigint;
  /** decimal string, USDC (e.g. `"0.002"`) */
  usdc: string;
  /** integer, USDC base units reserved by payments still in flight */
  pendingBaseUnits: bigint;
  /**
   * integer, USDC base units deposited into batch-settlement channels and not yet charged by a
   * voucher (present only when above zero); counts towards `totalUsdc`, not in `baseUnits`.
   */
  escrowBaseUnits?: bigint;
}

/** `POST /api/v1/jobs` body (docs/spec-notes.md 2.8; schema `JobRequest`). `budget_usdc`: whole USDC, at most 6 decimals. */
export type JobRequest = W.WireJobRequest;

/** 202 answer of `POST /api/v1/jobs` (schema `JobCreated`). */
export type JobCreated = W.WireJobCreated;

/**
 * The job record of `GET /api/v1/jobs/{id}` (schema `JobRecord`): whole-USDC amounts and their
 * exact `*_base_units` (integer strings of USDC base units), `payer`, the budget `payment`,
 * `cancel_requested`, and per step `cost_base_units` and `attempts`.
 */
export type JobRecord = W.WireJobRecord;

/** Lending protocols searched (schema `LendingProtocol`). */
export type LendingProtocol = W.WireLendingProtocol;

/** Query of the liquidation search (schema `LiquidationSearchQuery`, every field optional): `min_profit_usd` USD, `max_health_factor` unitless (0, 1.1], `limit` 1..500. */
export type LiquidationSearchParams = W.WireLiquidationSearchQuery;

/** One opportunity (schema `LiquidationOpportunity`). USD amounts are numbers; `max_repay_amount` is an integer string of debt-token base units; `health_factor` unitless (< 1: liquidatable now). */
export type LiquidationOpportunity = W.WireLiquidationOpportunity;

/** Answer of the liquidation search (schema `LiquidationSearchResponse`): opportunities sorted by `estimated_profit_usd` descending. */
export type LiquidationSearchResult = W.WireLiquidationSearchResponse;

/** Which position a plan liquidates (schema `LiquidationPlanOpportunity`): the identifying fields of a search opportunity (`market_id` for Morpho Blue). */
export type LiquidationPlanOpportunity = W.WireLiquidationPlanOpportunity;
/** Body of `POST /v1/liquidation-plans` (schema `LiquidationPlanRequest`): `chain` (default `ethereum`), `opportunity`, `searcher`. */
export type LiquidationPlanRequest = W.WireLiquidationPlanRequest;
/**
 * A liquidation plan (schema `LiquidationPlan`, docs/liquidation-plans.md): unsigned `transactions` for
 * `target_block`; `tokens_in`/`tokens_out`/`repay` amounts and `gas_used`, `base_fee_per_gas` are
 * integer strings (base units, gas units, wei); `gas_cost_usd`, `profit_usd` and each flow's `usd` are USD numbers.
 */
export type LiquidationPlan = W.WireLiquidationPlan;
/** One unsigned transaction of a plan (schema `PlannedTransaction`): `value` wei and `gas` units as integer strings. */
export type PlannedTransaction = W.WirePlannedTransaction;
/** Why a plan was refused (422 `code`): `not_liquidatable`, `unknown_position`, `insufficient_balance` (before payment), `would_revert`, `unprofitable` (refunded). */
export type LiquidationPlanRefusalReason = W.WireLiquidationPlanRefusalReason;

/** Chains the wallet monitor watches (schema `ChainName`). */
export type WalletMonitorChain = W.WireChainName;
/** Subscribable events (schema `WalletEventName`). */
export type WalletEventType = W.WireWalletEventName;

/** Body of `POST /v1/wallet-monitor` (docs/spec-notes.md 2.6; schema `WalletMonitorSubscriptionRequest`): 1 to 1,000 addresses, https `webhook_url`. */
export type SubscribeRequest = W.WireSubscriptionRequest;

/** A created subscription (schema `WalletMonitorSubscriptionCreated`). Keep `secret` (`whsec_...`): it is shown once and verifies every webhook. `expires_at`: UNIX seconds. */
export type SubscriptionCreated = W.WireSubscriptionCreated;

/** `GET /v1/wallet-monitor/{id}` (schema `WalletMonitorSubscription`): times in UNIX seconds, `delivery.billed` integer USDC base units. */
export type Subscription = W.WireSubscription;

/** Webhook payload of one wallet event (schema `WalletEvent`): `amount` and `block_number` integer strings; `asset.address` null for native ETH. */
export type WalletEvent = W.WireWalletEvent;

/** An event that exhausted its retries (schema `WalletMonitorDeadLetter`). */
export type DeadLetter = W.WireDeadLetter;

/** One delivery attempt (schema `WalletMonitorDeliveryAttempt`): outcome, HTTP status (null when nothing was sent), error code and human message. */
export type DeliveryAttempt = W.WireDeliveryAttempt;

/** Answer of `POST /v1/wallet-monitor/{id}/test-event` (schema `WalletMonitorTestEventQueued`): the queued test event (`test: true`) and its webhook id. */
export type TestEventQueued = W.WireTestEventQueued;

/** A metered account (`GET /v1/account`; schema `AccountView`): amounts are integer strings of USDC base units. */
export type AccountView = W.WireAccountView;

/** Answer of `POST /v1/account/deposit` (schema `DepositResponse`): the account after the credit and the settled deposit. */
export type DepositResponse = W.WireDepositResponse;

/**
 * One capability a provider offers (schema `ProviderOffer`, docs/decisions.md "Providers"): id `<product>.<name>`
 * (`product` `intelligence` (default) or `mev`), `price_usdc` decimal USDC (≤ 6 decimals, > 0),
 * `input_schema`/`output_schema` JSON Schema 2020-12 objects, `example_request` valid against
 * `input_schema` (the prober sends it), `timeout_ms` 1000..120000 (default 30000), `accepts_objective`.
 */
export type ProviderOffer = W.WireProviderOffer;

/** Answer of `POST /api/v1/providers/challenge` (schema `ProviderChallenge`): the text to sign with EIP-191, valid until `expires_at`. */
export type ProviderChallenge = W.WireProviderChallenge;

/**
 * A registration (schema `ProviderRegistered`): `provider_id` (`prv_<ULID>`), capabilities with their
 * catalog status (`PILOT` until a probe passes), and `signing_secret` (`whsec_...`, shown once:
 * the gateway signs every call to the endpoint with it, Standard Webhooks).
 */
export type ProviderRegistered = W.WireProviderRegistered;

/** A bearer token from Sign-In with Ethereum (`POST /v1/auth/token`). */
export interface BearerToken {
  /** opaque `acg_...` token for `Authorization: Bearer <access_token>` */
  access_token: string;
  token_type: 'Bearer';
  /** seconds the token lived when issued */
  expires_in: number;
  /** ms since epoch when it expires (computed on receipt) */
  expires_at: number;
  /** the signed-in wallet (checksummed) */
  address: `0x${string}`;
}
