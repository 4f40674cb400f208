import type { ResolvedCapability } from '@acg/execution';
import { channelVoucher, payloadAuthorization, readPaymentPayload } from '@acg/payments';
import { QuoteStore, usdcBaseUnits, type StoredQuote } from '@acg/provider-directory';
import { signDocument } from '@acg/receipts';
import type { Quote, QuoteRequest } from '@acg/schemas';
import { formatUnits } from 'viem';
import type { Services } from '../services.js';
import { problemDetails, type Problem } from '../trpc/problem.js';
import { inputSha256 } from '../trust.js';
import { resolveExecution } from './execution.js';
import { routeExecution } from './routing.js';

/** A refusal before any payment: status and RFC 9457 body (`reason` = a stable code). */
export interface QuoteProblem {
  ok: false;
  status: number;
  body: Problem;
}

const refusal = (status: number, reason: string, detail: string, extra: Record<string, unknown> = {}): QuoteProblem => ({
  ok: false,
  status,
  body: problemDetails(status, detail, { reason, ...extra }),
});

/** The offer a quote (or an execute) runs on: the provider id (null for the gateway's own capabilities) and the price, USDC base units. */
export interface ChosenOffer {
  provider_id: string | null;
  price: bigint;
}

/**
 * The offer a quote runs on: the first offer of the route that `routing` gives (the same ranking as
 * execute: docs/marketplace.md "Routing", suspended offers left out), or the gateway itself for a
 * built-in. 422 `no_offer` when no offer fits `routing`; 503 `offer_suspended` when every fitting
 * offer is suspended (docs/trust-v1.md "Suspension").
 */
export async function chooseQuoteOffer(
  services: Services,
  resolved: ResolvedCapability,
  routing: QuoteRequest['routing'],
): Promise<({ ok: true } & ChosenOffer) | QuoteProblem> {
  const routed = await routeExecution(services, resolved, routing);
  if (!routed.ok) {
    const reason = (routed.body as { reason?: string }).reason;
    if (reason === 'offer_suspended') return { ok: false, status: 503, body: routed.body as QuoteProblem['body'] };
    return refusal(422, 'no_offer', `No offer of ${resolved.definition.id} fits the routing: ${String((routed.body as { detail?: string }).detail ?? '')}`);
  }
  const first = routed.capability.route?.[0];
  if (first === undefined) return { ok: true, provider_id: null, price: resolved.price };
  const offer = (await services.providers.directory.offers(resolved.definition.id))?.find((o) => o.provider_id === first);
  return { ok: true, provider_id: first, price: offer ? usdcBaseUnits(offer.price) : routed.capability.price };
}

/**
 * `POST /api/v1/quotes`: resolves the capability and validates the input (as execute does, 404 /
 * 422 / 400), chooses the offer ({@link chooseQuoteOffer}), and stores and signs a quote valid
 * `QUOTE_TTL_SECONDS`: `quote` is the JWS (EdDSA, receipt key, `typ` `acg-quote+jws`) of every
 * other field. 503 `receipts_unavailable` when no receipt key is loaded.
 */
export async function createQuote(services: Services, request: QuoteRequest): Promise<{ ok: true; quote: Quote } | QuoteProblem> {
  const resolved = resolveExecution(services, request.capability_id, request.input);
  if (!resolved.ok) return resolved;
  const chosen = await chooseQuoteOffer(services, resolved, request.routing);
  if (!chosen.ok) return chosen;
  const key = services.receipts?.jwsKey;
  if (!key) return refusal(503, 'receipts_unavailable', 'Quotes are signed with the receipt key, which this gateway has not loaded.');
  const quotes = services.providers.quotes;
  const issued = quotes.now();
  const expires = issued + services.config.providers.quoteTtlSeconds * 1000;
  const fields = {
    quote_id: QuoteStore.newId(),
    capability_id: request.capability_id,
    provider_id: chosen.provider_id,
    price: formatUnits(chosen.price, 6),
    price_base_units: chosen.price.toString(),
    currency: 'USDC' as const,
    input_sha256: inputSha256(request.input),
    expires_at: new Date(expires).toISOString(),
  };
  const jws = await signDocument(key, fields, 'acg-quote+jws');
  await quotes.save({
    quote_id: fields.quote_id,
    capability_id: fields.capability_id,
    provider_id: fields.provider_id ?? '',
    price_base_units: chosen.price,
    input_sha256: fields.input_sha256,
    issued_at_ms: issued,
    expires_at_ms: expires,
    quote: jws,
  });
  return { ok: true, quote: { ...fields, quote: jws } };
}

const QUOTE_STATUS: Record<string, number> = {
  quote_not_found: 404,
  quote_expired: 410,
  quote_capability_mismatch: 409,
  quote_input_mismatch: 409,
  quote_used: 409,
};

const QUOTE_DETAIL: Record<string, string> = {
  quote_not_found: 'No such quote: request one with POST /api/v1/quotes.',
  quote_expired: 'The quote has expired; request a new one with POST /api/v1/quotes.',
  quote_capability_mismatch: 'The quote is for another capability.',
  quote_input_mismatch: 'The quote is for another input: a quote binds the exact input it priced (RFC 8785 canonical JSON).',
  quote_used: 'The quote has been used by another execution; request a new one.',
};

/**
 * The payment a request carries, as a quote records it: the payer and nonce of its x402 payload
 * (`PAYMENT-SIGNATURE` or `X-PAYMENT`; EIP-3009 for `exact`, Permit2 for `upto`:
 * `payloadAuthorization`) as `<from>:<nonce>` in lowercase hex; a `batch-settlement` voucher
 * as `<payer>:<channelId>:<cumulative>`; undefined
 * without a payment or when it cannot be read (the paywall then refuses it as it would anyway).
 */
export function carriedAuthorization(services: Services, getHeader: (name: string) => string | undefined): string | undefined {
  try {
    const payload = readPaymentPayload(getHeader, [services.paywall.requirements(0n)]);
    // a batch-settlement voucher: its payer, channel and cumulative amount (one voucher, one call)
    const voucher = payload && channelVoucher(payload);
    if (voucher) return `${voucher.payer}:${voucher.channelId}:${voucher.cumulative}`;
    const auth = payload && payloadAuthorization(payload);
    return auth ? `${auth.payer}:${auth.nonce}`.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An execute request naming `quote_id`, checked before any payment: the quote must exist (404
 * `quote_not_found`), be for this capability and this exact input (409 `quote_capability_mismatch`
 * / `quote_input_mismatch`), be unused (409 `quote_used`; only the resend of the payment that used
 * it passes, `payment` being the request's {@link carriedAuthorization}: a fresh payment naming a
 * used quote is refused before it is settled) and live (410 `quote_expired`), and its provider must
 * still serve the capability (409 `quote_provider_changed`). The call then costs exactly the quoted price.
 */
export async function quotedExecution(
  services: Services,
  resolved: ResolvedCapability,
  quoteId: string,
  rawInput: unknown,
  payment: string | undefined,
): Promise<{ ok: true; capability: ResolvedCapability; quote: StoredQuote } | QuoteProblem> {
  const checked = await services.providers.quotes.check(quoteId, resolved.definition.id, inputSha256(rawInput), payment);
  if (!checked.ok) return refusal(QUOTE_STATUS[checked.reason], checked.reason, QUOTE_DETAIL[checked.reason], { quote_id: quoteId });
  // the quoted provider must still offer the capability, and not be suspended: the call runs on it alone
  const quotedProvider = checked.quote.provider_id || undefined;
  const routed = await routeExecution(services, resolved, quotedProvider ? { prefer: 'trusted', providers: [quotedProvider] } : undefined);
  if (!routed.ok) {
    if ((routed.body as { reason?: string }).reason === 'offer_suspended') return { ok: false, status: 503, body: routed.body as QuoteProblem['body'] };
    return refusal(409, 'quote_provider_changed', 'The quoted provider no longer serves this capability; request a new quote.', { quote_id: quoteId });
  }
  return { ok: true, capability: { ...routed.capability, price: checked.quote.price_base_units }, quote: checked.quote };
}
