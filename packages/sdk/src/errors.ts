import type { PaymentRequired, PaymentRequirements } from './types.js';
import type { ProblemDetails, ProblemIssue, RefundInfo } from './types.js';

/** Version of this SDK, printed in error messages. */
export const SDK_VERSION = '0.1.0';

/** Options every SDK error takes. */
export interface AcgErrorOptions {
  /** Underlying error (network failure, signer failure, ...). */
  cause?: unknown;
  /** Longer explanation appended to `message`. */
  details?: string;
  /** Extra lines (one fact each) appended to `message`. */
  metaMessages?: string[];
}

/**
 * Base class of every error the SDK throws (viem style): `name` is the class name,
 * `shortMessage` is one human sentence, and `message` is `shortMessage` followed by
 * `metaMessages`, `details` and the SDK version. Catch it to catch anything from the SDK.
 */
export class AcgError extends Error {
  override name = 'AcgError';
  /** One sentence, without details. */
  readonly shortMessage: string;
  /** Longer explanation, if any. */
  readonly details?: string;
  /** Extra facts, one per line. */
  readonly metaMessages?: string[];
  readonly version = `agent-capability-gateway-sdk@${SDK_VERSION}`;

  constructor(shortMessage: string, options: AcgErrorOptions = {}) {
    const lines = [shortMessage];
    if (options.metaMessages?.length) lines.push('', ...options.metaMessages);
    if (options.details) lines.push('', `Details: ${options.details}`);
    lines.push(`Version: agent-capability-gateway-sdk@${SDK_VERSION}`);
    super(lines.join('\n'), options.cause === undefined ? undefined : { cause: options.cause });
    this.shortMessage = shortMessage;
    this.details = options.details;
    this.metaMessages = options.metaMessages;
  }
}

/**
 * The gateway answered with an RFC 9457 problem (`application/problem+json`):
 * 400 bad input (`errors` lists each issue with its path, e.g. `["input","address"]`),
 * 404 unknown id, 409 conflict (Idempotency-Key reused with another body, or payment in
 * progress), 422 not executable, 502/503 the capability failed after payment (then
 * `executionId` and `refund` are set: the payment is refunded on-chain), 503 payment
 * verification unavailable (nothing charged). `problem` holds the whole body.
 */
export class GatewayError extends AcgError {
  override name = 'GatewayError';
  /** HTTP status code. */
  readonly status: number;
  /** Problem type URI reference (`about:blank` when generic). */
  readonly type: string;
  /** Short title of the status, e.g. `Bad Request`. */
  readonly title: string;
  /** Human-readable explanation from the gateway. */
  readonly detail: string;
  /** Validation issues (400), each with `path` from the request body root and `message`. */
  readonly errors?: ProblemIssue[];
  /** The complete problem body, extension members included. */
  readonly problem: ProblemDetails;
  /** Set when the failure happened after payment: the execution that was charged and is refunded. */
  readonly executionId?: string;
  /** Refund of a payment taken before the capability failed (`amount`: integer string, USDC base units). */
  readonly refund?: RefundInfo;

  constructor(problem: ProblemDetails, options: AcgErrorOptions = {}) {
    const metaMessages = [
      `Status: ${problem.status} ${problem.title}`,
      ...(problem.errors ?? []).map((e) => `- ${e.path.join('.') || '(body)'}: ${e.message}`),
      ...(typeof problem.execution_id === 'string' ? [`Execution: ${problem.execution_id}`] : []),
      ...(isRefund(problem.refund) ? [`Refund: ${problem.refund.status}, ${problem.refund.amount} base units`] : []),
      ...(options.metaMessages ?? []),
    ];
    super(problem.detail || problem.title || `HTTP ${problem.status}`, { ...options, metaMessages });
    this.status = problem.status;
    this.type = problem.type;
    this.title = problem.title;
    this.detail = problem.detail;
    this.errors = problem.errors;
    this.problem = problem;
    if (typeof problem.execution_id === 'string') this.executionId = problem.execution_id;
    if (isRefund(problem.refund)) this.refund = problem.refund;
  }
}

function isRefund(v: unknown): v is RefundInfo {
  return !!v && typeof v === 'object' && typeof (v as RefundInfo).status === 'string' && typeof (v as RefundInfo).amount === 'string';
}

/**
 * The capability id is not listed in the gateway's `/registry` (checked before any request to
 * execute), or the gateway answered 404 for it. A {@link GatewayError} with status 404.
 */
export class UnknownCapabilityError extends GatewayError {
  override name = 'UnknownCapabilityError';
  /** The id that was asked for. */
  readonly capabilityId: string;
  /** Ids the registry lists (empty when the 404 came from the gateway directly). */
  readonly available: string[];

  constructor(capabilityId: string, opts: { available?: string[]; problem?: ProblemDetails; cause?: unknown } = {}) {
    const available = opts.available ?? [];
    super(
      opts.problem ?? {
        type: 'about:blank',
        title: 'Not Found',
        status: 404,
        detail: `Unknown capability "${capabilityId}": it is not listed in the gateway's /registry.`,
      },
      { cause: opts.cause, metaMessages: available.length ? [`Available: ${available.join(', ')}`] : [] },
    );
    this.capabilityId = capabilityId;
    this.available = available;
  }
}

/**
 * The gateway asked for payment (HTTP 402) and the client has no `account` to pay with, or the
 * gateway refused the payment that was sent (`reason` says why, e.g. `insufficient_funds`,
 * `invalid_exact_evm_payload_signature`; nothing was charged then).
 * `paymentRequired` is the decoded x402 v2 `PAYMENT-REQUIRED` header (`accepts[].amount`:
 * integer string, USDC base units); `challenge` is the JSON body (docs/spec-notes.md 2.9 fields + `accepts`).
 */
export class PaymentRequiredError extends AcgError {
  override name = 'PaymentRequiredError';
  readonly status = 402;
  readonly capabilityId: string;
  /** Decoded x402 v2 PaymentRequired (from the `PAYMENT-REQUIRED` header, else the body). */
  readonly paymentRequired: PaymentRequired;
  /** The 402 JSON body as received (docs/spec-notes.md 2.9 `scheme`, `network`, `payTo`, `maxAmountRequired`, `asset`, `x402Version`). */
  readonly challenge: Record<string, unknown> | undefined;
  /** Machine reason when a sent payment was refused (x402 `invalidReason` style), else undefined. */
  readonly reason?: string;
  /** Amount asked by the first accepted requirement, integer USDC base units. */
  readonly amount: bigint | undefined;

  constructor(capabilityId: string, paymentRequired: PaymentRequired, opts: { challenge?: Record<string, unknown>; reason?: string; refused?: boolean } = {}) {
    const first = paymentRequired.accepts?.[0];
    const amount = first && /^\d+$/.test(first.amount) ? BigInt(first.amount) : undefined;
    super(
      opts.refused
        ? `The gateway refused the payment for "${capabilityId}"${opts.reason ? ` (${opts.reason})` : ''}: ${paymentRequired.error ?? 'payment invalid'}`
        : `Payment required to execute "${capabilityId}": pass a viem account to createGatewayClient to pay automatically.`,
      {
        metaMessages: first ? [`Asked: ${first.amount} base units of ${first.asset} on ${first.network} to ${first.payTo}`] : undefined,
      },
    );
    this.capabilityId = capabilityId;
    this.paymentRequired = paymentRequired;
    this.challenge = opts.challenge;
    this.reason = opts.reason;
    this.amount = amount;
  }
}

/**
 * Thrown before signing when a payment would break a spend limit: `limit` is `perCall`
 * (the challenge's amount exceeds `spendLimits.perCallUsdc`) or `total` (spent + in flight +
 * amount would exceed `spendLimits.totalUsdc`). Nothing was signed or paid. All amounts are
 * integer USDC base units (6 decimals).
 */
export class SpendLimitExceededError extends AcgError {
  override name = 'SpendLimitExceededError';
  readonly limit: 'perCall' | 'total';
  /** Amount the gateway asked for, base units. */
  readonly amount: bigint;
  /** The limit that would be broken, base units. */
  readonly limitBaseUnits: bigint;
  /** Already spent by this client, base units. */
  readonly spentBaseUnits: bigint;
  /** Reserved by payments still in flight, base units. */
  readonly pendingBaseUnits: bigint;
  readonly capabilityId?: string;

  constructor(args: {
    limit: 'perCall' | 'total';
    amount: bigint;
    limitBaseUnits: bigint;
    spentBaseUnits: bigint;
    pendingBaseUnits: bigint;
    capabilityId?: string;
  }) {
    const what = args.capabilityId ? ` for "${args.capabilityId}"` : '';
    super(
      args.limit === 'perCall'
        ? `Payment of ${fmt(args.amount)} USDC${what} exceeds the per-call limit of ${fmt(args.limitBaseUnits)} USDC; nothing was paid.`
        : `Payment of ${fmt(args.amount)} USDC${what} would bring the total to ${fmt(args.spentBaseUnits + args.pendingBaseUnits + args.amount)} USDC, over the total limit of ${fmt(args.limitBaseUnits)} USDC; nothing was paid.`,
      { metaMessages: [`Spent: ${fmt(args.spentBaseUnits)} USDC, in flight: ${fmt(args.pendingBaseUnits)} USDC`] },
    );
    this.limit = args.limit;
    this.amount = args.amount;
    this.limitBaseUnits = args.limitBaseUnits;
    this.spentBaseUnits = args.spentBaseUnits;
    this.pendingBaseUnits = args.pendingBaseUnits;
    this.capabilityId = args.capabilityId;
  }
}

/**
 * Thrown before signing when no requirement in the 402 challenge's `accepts` can be paid: scheme
 * not one of the client's `schemes` (default `exact`), a network other than the client's, an asset the client does not know, or not the
 * call's terms (for execute the x402 terms `/registry` advertises: asset, payTo, an amount not
 * above the price; for a job or deposit exactly its amount), or when the registry advertises no
 * x402 payment for the capability. `problems` says why each entry was refused. Nothing was
 * signed or paid.
 */
export class PaymentTermsMismatchError extends AcgError {
  override name = 'PaymentTermsMismatchError';
  readonly capabilityId: string;
  /** What the challenge asked for. */
  readonly accepts: PaymentRequirements[];
  /** Why each requirement was rejected, in `accepts` order. */
  readonly problems: string[];

  constructor(capabilityId: string, accepts: PaymentRequirements[], problems: string[]) {
    super(`No payment requirement for "${capabilityId}" matches the terms this client accepts; nothing was paid.`, {
      metaMessages: problems.map((p) => `- ${p}`),
    });
    this.capabilityId = capabilityId;
    this.accepts = accepts;
    this.problems = problems;
  }
}

/** A USDC amount (e.g. a spend limit) is not a non-negative decimal with at most 6 decimals. */
export class InvalidAmountError extends AcgError {
  override name = 'InvalidAmountError';
  readonly value: unknown;
  constructor(label: string, value: unknown, why = 'not a non-negative decimal USDC amount') {
    super(`Invalid ${label} ${JSON.stringify(typeof value === 'bigint' ? value.toString() : value)}: ${why}.`);
    this.value = value;
  }
}

/**
 * The gateway could not be reached or answered something that is not the expected JSON.
 * `paymentOutcome` is `unknown` when a signed payment had been sent and no answer came back
 * (the client kept the amount counted as spent); `none` when no payment was involved.
 */
export class GatewayRequestError extends AcgError {
  override name = 'GatewayRequestError';
  readonly url: string;
  readonly status?: number;
  readonly paymentOutcome: 'none' | 'unknown';

  constructor(url: string, shortMessage: string, opts: { status?: number; cause?: unknown; paymentOutcome?: 'none' | 'unknown' } = {}) {
    const cause = opts.cause as { message?: string; cause?: { code?: string; message?: string } } | undefined;
    const detail = cause?.cause?.code ?? cause?.cause?.message ?? cause?.message;
    super(shortMessage, {
      cause: opts.cause,
      details: detail,
      metaMessages: [`URL: ${url}`, ...(opts.paymentOutcome === 'unknown' ? ['A signed payment was sent; its outcome is unknown.'] : [])],
    });
    this.url = url;
    this.status = opts.status;
    this.paymentOutcome = opts.paymentOutcome ?? 'none';
  }
}

function fmt(baseUnits: bigint): string {
  const scale = 1_000_000n;
  const frac = (baseUnits % scale).toString().padStart(6, '0').replace(/0+$/, '');
  return frac ? `${baseUnits / scale}.${frac}` : `${baseUnits / scale}`;
}
