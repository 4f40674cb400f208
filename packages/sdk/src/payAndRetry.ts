/**
 * The one x402 transport of the SDK (docs/spec-notes.md 2.9, docs/decisions.md "x402 payments"): request → 402
 * `PaymentRequired` → choose a requirement this client can pay, in its preferred scheme → sign it
 * with the official x402 client (`@x402/core` client + the `@x402/evm` `exact` scheme: an EIP-3009
 * `transferWithAuthorization`; `upto` and `batch-settlement`: schemePayment.ts, README "Schemes")
 * → retry with `PAYMENT-SIGNATURE` → read `PAYMENT-RESPONSE`. Execute, jobs, the
 * liquidation search and account deposits all pay through {@link payAndRetry}, so the spend
 * limits and the `spent()` accounting are applied here and nowhere else.
 */
import { decodePaymentResponseHeader } from '@x402/core/http';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { x402Client, x402HTTPClient } from '@x402/fetch';
import type { LocalAccount } from 'viem';
import type { GatewayContext } from './context.js';
import { request, type GatewayResponse, type RequestOptions } from './http.js';
import { chooseRequirement, type ChooseRequirementReturnType, type PaymentTerms } from './chooseRequirement.js';
import { AcgError, GatewayRequestError, PaymentRequiredError, PaymentTermsMismatchError, type SpendLimitExceededError } from './errors.js';
import { parseJson, parseProblem, readPaymentRequired } from './protocol.js';
import { sessionFromAuthenticationInfo, signInWithXHeaders } from './signInWithX.js';
import { prepareBatchPayment, settleReservation, signUptoPayload, type SchemePayment } from './schemePayment.js';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from './types.js';

/** Parameters of {@link payAndRetry}. */
export interface PayAndRetryParameters extends RequestOptions {
  /** Path under the gateway base URL, with its query string, e.g. `/api/v1/execute`. */
  path: string;
  /** Names the paid call in errors and in spend-limit errors (a capability id). */
  label: string;
  /** Extra terms of the requirement; a function is called only when a 402 arrives. */
  terms?: PaymentTerms | (() => PaymentTerms | Promise<PaymentTerms>);
  /** Called once when no requirement matches `terms` (e.g. refetch /registry), then chosen again. */
  refreshTerms?: () => Promise<PaymentTerms>;
}

/** The payment {@link payAndRetry} made, when it made one. */
export interface PaymentMade {
  requirement: PaymentRequirements;
  /** integer USDC base units */
  amount: bigint;
  /** Decoded `PAYMENT-RESPONSE` header (settlement: `transaction`, `payer`, `network`), when sent. */
  settlement?: SettleResponse;
}

/**
 * The final answer: any status but 402 (a 402 throws). `payment` is set when a payment was sent.
 * A non-2xx answer is for the caller to turn into its error; the accounting is already done.
 */
export interface PayAndRetryReturnType extends GatewayResponse {
  payment?: PaymentMade;
}

/** Errors of {@link payAndRetry}. */
export type PayAndRetryErrorType = PaymentRequiredError | PaymentTermsMismatchError | SpendLimitExceededError | GatewayRequestError | AcgError;

const MAX_RETRY_AFTER_MS = 5_000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Signs one x402 payment for `requirement` with the official x402 client (`@x402/core` client +
 * `@x402/evm` exact scheme: an EIP-3009 `transferWithAuthorization` signed with EIP-712), which is
 * itself capped to this asset and `amount` (integer USDC base units). The account only signs.
 * Used by {@link payAndRetry} (HTTP header) and by `callPaidTool` (MCP `_meta["x402/payment"]`).
 *
 * @returns the x402 v2 PaymentPayload (`{x402Version: 2, resource, accepted, payload: {signature, authorization}}`).
 * @throws {AcgError} when the account cannot sign (nothing was paid).
 */
export async function signPaymentPayload(
  account: LocalAccount,
  paymentRequired: PaymentRequired,
  requirement: PaymentRequirements,
  amount: bigint,
): Promise<PaymentPayload> {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: account, networks: [requirement.network] });
  // Defence in depth: the official client itself refuses anything but this asset at this amount.
  client.setSpendControls({
    maxAmountPerPayment: false,
    allowedAssets: [{ network: requirement.network, asset: requirement.asset, maxAmountPerPayment: amount.toString() }],
  });
  try {
    const extensions = withPaymentIdentifier(paymentRequired.extensions);
    return await client.createPaymentPayload({ ...paymentRequired, ...(extensions ? { extensions } : {}), accepts: [requirement] });
  } catch (cause) {
    throw new AcgError('Could not sign the x402 payment with the given account; nothing was paid.', { cause, details: (cause as Error)?.message });
  }
}

/**
 * The 402's `extensions` with a fresh x402 `payment-identifier` id (`pay_` + 32 hex digits) when the
 * server declares that extension (the gateway does on every 402): the id never goes on-chain, so a
 * re-send of the same signed payment (after a network error) proves it comes from the payer and
 * gets the stored result, where anyone else resending the public settled authorization gets a
 * receipt only. Unchanged otherwise.
 */
function withPaymentIdentifier(extensions: PaymentRequired['extensions']): PaymentRequired['extensions'] {
  const declared = extensions?.['payment-identifier'] as { info?: Record<string, unknown> } | undefined;
  if (!declared || typeof declared !== 'object') return extensions;
  const id = `pay_${globalThis.crypto.randomUUID().replaceAll('-', '')}`;
  return { ...extensions, 'payment-identifier': { ...declared, info: { ...declared.info, id } } };
}

async function signPayment(account: LocalAccount, pr: PaymentRequired, requirement: PaymentRequirements, amount: bigint): Promise<Record<string, string>> {
  const payload = await signPaymentPayload(account, pr, requirement, amount);
  return new x402HTTPClient(new x402Client()).encodePaymentSignatureHeader(payload);
}

function settlementOf(r: GatewayResponse): SettleResponse | undefined {
  const h = r.response.headers.get('payment-response');
  if (!h) return undefined;
  try {
    return decodePaymentResponseHeader(h.trim());
  } catch {
    return undefined;
  }
}

async function chooseWithTerms(ctx: GatewayContext, p: PayAndRetryParameters, pr: PaymentRequired): Promise<ChooseRequirementReturnType> {
  const base = { paymentRequired: pr, network: ctx.network, assets: ctx.assets, ledger: ctx.ledger, label: p.label, schemes: ctx.schemes };
  const terms = typeof p.terms === 'function' ? await p.terms() : p.terms;
  try {
    return chooseRequirement({ ...base, terms });
  } catch (e) {
    if (!(e instanceof PaymentTermsMismatchError) || !p.refreshTerms) throw e;
    // The gateway may have changed its terms since they were read: check once more.
    return chooseRequirement({ ...base, terms: await p.refreshTerms() });
  }
}

/**
 * Sends `path` and pays the x402 challenge if one comes back.
 *
 * 1. Sends the request. Any answer but 402 is returned as is (nothing paid).
 * 2. On 402: decodes `PAYMENT-REQUIRED` (else the JSON body); without `ctx.account` throws
 *    {@link PaymentRequiredError}. Picks a requirement with {@link chooseRequirement} and reserves
 *    its amount in `ctx.ledger` (the spend limits; concurrent calls cannot pass the total together).
 *    Nothing is signed before this point.
 * 3. Signs one payment (`exact`: an EIP-3009 authorization; `upto`: a Permit2 ceiling;
 *    `batch-settlement`: a voucher, with a deposit when the channel needs one, one channel payment
 *    of this client at a time, signed again once after a 402 that resynchronised the channel) and
 *    re-sends with `PAYMENT-SIGNATURE`. After a network
 *    error, or a 409 (payment in progress) / 503 (verification unavailable) with `Retry-After`, it
 *    re-sends the SAME signed payment (idempotent replay; waits `Retry-After`, at most 5 s), at most
 *    `ctx.maxRetries` times. It never signs a second payment for one call.
 * 4. Accounting (README "Spend limits": an `upto` ceiling counts what was settled, a deposit goes to
 *    the channel's escrow, a voucher counts what was charged): a 2xx is counted as spent, except one marked `Idempotent-Replayed: true` (the
 *    stored answer of an earlier payment for the same Idempotency-Key: this authorization was not
 *    settled); a 402 refusal is released and thrown as
 *    {@link PaymentRequiredError} (`reason`); a 5xx, a 409 still in progress, or a problem naming
 *    an `execution_id` or a `refund` (charged, refunded later), is counted; any other answer (400, 404, 409 conflict,
 *    422) is released. No answer at all: counted, {@link GatewayRequestError} with
 *    `paymentOutcome: "unknown"`.
 *
 * @returns the final answer and, when a payment was sent, the requirement, amount (integer USDC
 *   base units) and decoded `PAYMENT-RESPONSE`.
 * @throws {PaymentRequiredError} {PaymentTermsMismatchError} {SpendLimitExceededError} {GatewayRequestError} {AcgError} (signing failed)
 *
 * @example
 * const r = await payAndRetry(ctx, { path: '/v1/account/deposit', method: 'POST', body: JSON.stringify({ amount_usdc: '1' }), label: 'gateway.account_deposit', terms: { exactAmount: 1_000_000n } })
 */
export async function payAndRetry(ctx: GatewayContext, p: PayAndRetryParameters): Promise<PayAndRetryReturnType> {
  const { path, method, headers = {}, body, signal } = p;
  const url = `${ctx.baseUrl}${path}`;
  const first = await request(ctx, path, { method, headers, body, signal });
  if (first.response.status !== 402) return first;

  const challenge = parseJson(first.text) as Record<string, unknown> | undefined;
  const pr = readPaymentRequired(first.response.headers.get('payment-required'), challenge);
  if (!pr) throw new GatewayRequestError(url, 'The gateway answered 402 without a readable x402 PaymentRequired.', { status: 402 });
  if (!ctx.account) throw new PaymentRequiredError(p.label, pr, { challenge });
  const account = ctx.account;

  const { requirement, amount } = await chooseWithTerms(ctx, p, pr);
  if (requirement.scheme === 'batch-settlement') {
    // one channel payment at a time: each voucher builds on the cumulative amount the last answer confirmed
    return ctx.channels.exclusive(async () => {
      for (let attempt = 0; ; attempt++) {
        const payment = await prepareBatchPayment(ctx, account, pr, requirement, p.label);
        const done = await sendPaid(ctx, p, pr, url, payment.headers, { requirement, amount }, payment.finish);
        // a 402 that resynchronised the channel state (the official client's recovery): sign again, once
        if (done.recovered && attempt === 0) continue;
        if (done.refusal) throw done.refusal;
        return done.result;
      }
    });
  }

  const reservation = ctx.ledger.reserve(amount, p.label); // throws SpendLimitExceededError (a concurrent call got there first)
  let paymentHeaders: Record<string, string>;
  try {
    paymentHeaders =
      requirement.scheme === 'upto'
        ? new x402HTTPClient(new x402Client()).encodePaymentSignatureHeader(await signUptoPayload(ctx, account, pr, requirement))
        : await signPayment(account, pr, requirement, amount);
  } catch (e) {
    reservation.release();
    throw e;
  }
  const done = await sendPaid(ctx, p, pr, url, paymentHeaders, { requirement, amount }, async (outcome, answer) => {
    settleReservation(reservation, outcome, answer?.settlement, requirement.scheme);
    return { recovered: false };
  });
  if (done.refusal) throw done.refusal;
  return done.result;
}

/**
 * Sends the signed payment (with sign-in-with-x), keeps the session it brings, and settles the
 * spend accounting through `finish`: a 2xx is `paid` (a replayed answer, `Idempotent-Replayed: true`,
 * is `refused`: that authorization was never settled), a 402 `refused` (returned as a
 * {@link PaymentRequiredError}), a 5xx, a 409 still in progress or a problem naming an
 * `execution_id` / `refund` `charged`, anything else `refused`.
 */
async function sendPaid(
  ctx: GatewayContext,
  p: PayAndRetryParameters,
  pr: PaymentRequired,
  url: string,
  paymentHeaders: Record<string, string>,
  made: { requirement: PaymentRequirements; amount: bigint },
  finish: SchemePayment['finish'],
): Promise<{ result: PayAndRetryReturnType; refusal?: PaymentRequiredError; recovered: boolean }> {
  const account = ctx.account!;
  // x402 sign-in-with-x beside the payment: the answer carries the payer's bearer session (signInWithX.ts)
  const signInHeaders = await signInWithXHeaders(account, pr, url, ctx.network);
  const r = await resendPaid(ctx, p, { ...(p.headers ?? {}), ...paymentHeaders, ...signInHeaders }, () => finish('charged'));
  const session = sessionFromAuthenticationInfo(r.response.headers, account.address);
  if (session) ctx.session.token = session;
  const status = r.response.status;
  const settlement = settlementOf(r);
  const answer = { status, getHeader: (name: string) => r.response.headers.get(name), settlement };
  const payment: PaymentMade = { ...made, settlement };
  if (r.response.ok) {
    // an Idempotency-Key bound to an earlier payment: this authorization only proved the payer and
    // was never settled (docs/decisions.md "Idempotency-Key replays"), so it is not spent
    if (r.response.headers.get('idempotent-replayed') === 'true') {
      await finish('refused');
      return { result: r, recovered: false };
    }
    await finish('paid', answer);
    return { result: { ...r, payment }, recovered: false };
  }
  if (status === 402) {
    const { recovered } = await finish('refused', answer); // refused before settlement: nothing charged
    const refusal = parseJson(r.text) as Record<string, unknown> | undefined;
    const refusedPr = readPaymentRequired(r.response.headers.get('payment-required'), refusal) ?? pr;
    const reason = typeof refusal?.reason === 'string' ? refusal.reason : typeof refusedPr.error === 'string' ? refusedPr.error : undefined;
    return {
      result: r,
      recovered,
      refusal: new PaymentRequiredError(p.label, refusedPr, { challenge: refusal, reason, refused: true }),
    };
  }
  const problem = parseProblem(status, r.text);
  // Charged when the operation failed after settlement (refunded later), or the outcome is unclear
  // (5xx, or a 409 "payment in progress" still unsettled after the retries).
  const inProgress = status === 409 && r.response.headers.get('retry-after') !== null;
  const charged = status >= 500 || inProgress || problem.execution_id !== undefined || problem.refund !== undefined;
  await finish(charged ? 'charged' : 'refused', answer);
  return { result: { ...r, payment }, recovered: false };
}

/** Sends the signed payment; re-sends the same one after a network error or a 409/503 with Retry-After. */
async function resendPaid(
  ctx: GatewayContext,
  p: PayAndRetryParameters,
  headers: Record<string, string>,
  lost: () => Promise<unknown>,
): Promise<GatewayResponse> {
  for (let attempt = 0; ; attempt++) {
    let r: GatewayResponse;
    try {
      r = await request(ctx, p.path, { method: p.method, headers, body: p.body, signal: p.signal });
    } catch (e) {
      if (attempt < ctx.maxRetries && !p.signal?.aborted) continue;
      await lost(); // the gateway may have settled it: keep it counted
      throw new GatewayRequestError(`${ctx.baseUrl}${p.path}`, `No answer from the gateway after sending a signed payment for "${p.label}".`, {
        cause: (e as GatewayRequestError).cause ?? e,
        paymentOutcome: 'unknown',
      });
    }
    const status = r.response.status;
    const retryAfter = r.response.headers.get('retry-after');
    const replayable = (status === 409 || status === 503) && retryAfter !== null && parseProblem(status, r.text).execution_id === undefined;
    if (replayable && attempt < ctx.maxRetries && !p.signal?.aborted) {
      const seconds = Number(retryAfter);
      await sleep(Number.isFinite(seconds) && seconds >= 0 ? Math.min(MAX_RETRY_AFTER_MS, seconds * 1000) : 1000);
      continue;
    }
    return r;
  }
}
