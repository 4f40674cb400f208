import {
  CapabilityFailure,
  defineCapability,
  PAID_THROUGH_EXECUTE,
  type CallEvidence,
  type CapabilityCall,
  type ExecutableCapability,
  type ProviderCredit,
} from '@acg/capabilities';
import { ProviderCallResponse, type AttemptOutcome, type ProviderOffer, type RoutingAttempt } from '@acg/schemas';
import { verifyResultSignature } from '@acg/provider-kit';
import { parseUnits, type Hex } from 'viem';
import { z } from 'zod';
import type { ProviderCallOutcome, ProviderClient } from './client.js';
import { compileJsonSchema, schemaIssues } from './jsonSchema.js';
import type { OfferStats } from './offerStats.js';
import { rankOffers, type OfferScorer, type RankedOffers, type RoutableOffer, type RoutingOptions } from './routing.js';
import { offerCapabilityId, type ProviderRecord, type ProviderStore } from './store.js';
import type { OfferSuspension, TrustRecords } from './trustRecords.js';

export type { ProviderCredit };

/** Where a provider's share goes: the provider ledger's `credit` (idempotent per execution id). */
export interface ProviderEarnings {
  credit(e: ProviderCredit): Promise<unknown>;
}

/** What provider capabilities use at run time: the HTTP client, per-offer measurements, the per-capability counters, the ledger and the trust scorer. */
export interface ProviderRuntime {
  client: ProviderClient;
  store: Pick<ProviderStore, 'countCall'>;
  stats: Pick<OfferStats, 'recordCall' | 'read'>;
  /** Trust scores for `prefer: "trusted"` (docs/marketplace.md "Trust scores"). */
  scorer: OfferScorer;
  earnings?: ProviderEarnings;
  /**
   * Where each execution's outcome and latency are recorded for its trust score (packages/provider-directory README
   * "Trust scores"), and each offer's suspension is read before it runs ({@link unsuspendedOffers}).
   */
  trust?: Pick<TrustRecords, 'record' | 'suspension'>;
}

/** A price in decimal USDC (`"0.002"`) as base units (2000n). */
export const usdcBaseUnits = (price: string): bigint => parseUnits(price, 6);

/** One provider's offer with its provider. */
export interface OfferOf {
  record: ProviderRecord;
  offer: ProviderOffer;
}

/**
 * A capability contract and its offers (docs/marketplace.md "Contracts and offers"): `id`, the
 * offer that defines it (`contract`: description, input/output JSON Schema, `example_request`;
 * the offer that created it, or while its creator is retired the first offer that joined it) and
 * every offer of it, the defining one included.
 */
export interface Contract {
  id: string;
  contract: OfferOf;
  offers: OfferOf[];
}

/** Groups the offers of active providers by capability id into {@link Contract}s, creators first. */
export function contractsOf(records: readonly ProviderRecord[]): Contract[] {
  const byId = new Map<string, OfferOf[]>();
  for (const record of records) {
    for (const offer of record.offers) {
      const id = offerCapabilityId(offer);
      byId.set(id, [...(byId.get(id) ?? []), { record, offer }]);
    }
  }
  return [...byId.entries()].map(([id, offers]) => ({ id, contract: offers.find((o) => o.offer.name !== undefined) ?? offers[0], offers }));
}

const title = (id: string) => (id.split('.')[1] ?? id).replaceAll('_', ' ').replace(/^./, (c) => c.toUpperCase());

/** What one attempt gave: the valid result and its signature, or the attempt's outcome and the buyer-facing failure. */
type Attempt =
  | { ok: true; result: Record<string, unknown>; signature: Hex; ms: number }
  | { ok: false; outcome: Exclude<AttemptOutcome, 'succeeded'>; failure: CapabilityFailure; ms: number };

/** Why a provider's answer failed the call, as the buyer sees it (never the provider's text). */
function failureOf(outcome: Extract<ProviderCallOutcome, { ok: false }>): Extract<Attempt, { ok: false }> {
  const of = (o: Exclude<AttemptOutcome, 'succeeded'>, failure: CapabilityFailure) => ({ ok: false as const, outcome: o, failure, ms: outcome.ms });
  if (outcome.reason === 'timeout')
    return of('timeout', new CapabilityFailure('provider_timeout', 'The provider did not answer in time; the payment is refunded.', 504));
  if (outcome.reason.startsWith('http_'))
    return of('failed', new CapabilityFailure('provider_error', `The provider answered HTTP ${outcome.status}; the payment is refunded.`, 502));
  if (outcome.reason === 'not_json' || outcome.reason === 'response_too_large')
    return of(
      'invalid_output',
      new CapabilityFailure('provider_invalid_output', 'The provider answered something other than its result; the payment is refunded.', 502),
    );
  return of('failed', new CapabilityFailure('provider_unavailable', 'The provider could not be reached; the payment is refunded.', 502));
}

/**
 * The offers of `contract` as routing sees them (price, timeout, measurements) and their trust
 * scores, read in one round trip for the measurements.
 */
export async function routableOffers(
  contract: Contract,
  runtime: Pick<ProviderRuntime, 'stats' | 'scorer'>,
): Promise<{ offers: RoutableOffer[]; scores: Map<string, number | null> }> {
  const measured = await runtime.stats.read(contract.offers.map((o) => ({ capabilityId: contract.id, providerId: o.record.provider_id })));
  const offers = contract.offers.map(
    (o, i): RoutableOffer => ({
      provider_id: o.record.provider_id,
      provider: o.record.name,
      price: usdcBaseUnits(o.offer.price_usdc),
      timeout_ms: o.offer.timeout_ms,
      latency_ms_p50: measured[i].latency_ms_p50,
      latency_ms_p99: measured[i].latency_ms_p99,
      success_rate: measured[i].success_rate,
      status: measured[i].status,
      // the contract's creator: also before its first probe, and whatever its probes say while it is the only offer (as a provider's capability always was)
      routable:
        measured[i].status === 'live' ||
        (o === contract.contract && o.offer.name !== undefined && (measured[i].status === 'pilot' || contract.offers.length === 1)),
    }),
  );
  const scores = new Map<string, number | null>();
  await Promise.all(offers.map(async (o) => scores.set(o.provider_id, await runtime.scorer.scoreOf(o.provider_id, contract.id).catch(() => null))));
  return { offers, scores };
}

/** {@link rankOffers} over the contract's current measurements and scores. */
export async function routeContract(
  contract: Contract,
  routing: RoutingOptions,
  runtime: Pick<ProviderRuntime, 'stats' | 'scorer' | 'trust'>,
): Promise<RankedOffers> {
  const { offers, scores } = await routableOffers(contract, runtime);
  const ranked = rankOffers(offers, routing, scores);
  if (!ranked.ok) return ranked;
  const { kept, suspended } = await unsuspendedOffers(contract.id, ranked.offers, runtime);
  if (kept.length === 0 && suspended) return { ok: false, reason: 'offer_suspended', ...suspended };
  return { ok: true, offers: kept };
}

/**
 * The suspension check of every path that runs a provider offer (docs/trust-v1.md "Suspension"):
 * REST and `/trpc` execute, MCP tools and quotes route through {@link routeContract} before any
 * payment, and `run` (job steps, and a route fixed earlier, e.g. by a quote) checks the offers it
 * is about to call. `offers` without the suspended ones, in order, and the first suspension met.
 */
export async function unsuspendedOffers<T extends { provider_id: string }>(
  capabilityId: string,
  offers: readonly T[],
  runtime: Pick<ProviderRuntime, 'trust'>,
): Promise<{ kept: T[]; suspended?: { provider_id: string; suspended: OfferSuspension } }> {
  const trust = runtime.trust;
  if (!trust) return { kept: [...offers] };
  const suspensions = await Promise.all(offers.map((o) => trust.suspension(o.provider_id, capabilityId)));
  const first = suspensions.findIndex((s) => s !== null);
  return {
    kept: offers.filter((_, i) => suspensions[i] === null),
    ...(first === -1 ? {} : { suspended: { provider_id: offers[first].provider_id, suspended: suspensions[first]! } }),
  };
}

/**
 * The capability a contract becomes (docs/marketplace.md): listed once in the catalog, paid per
 * call with x402 through `POST /api/v1/execute` and job steps like a built-in. Its `input` enforces
 * the contract's `input_schema` with Ajv (a 400 before payment); its price is the lowest offer's
 * (the execute path asks for the highest price of the request's route). `run` tries the offers of
 * `call.route` in order (without one: the live offers ranked `trusted` whose price fits the amount
 * paid), each with its own `timeout_ms`, all within the slowest offer's timeout from the start
 * (the caller's deadline). An attempt fails on a non-2xx, a timeout, a non-JSON body, a result
 * invalid against the offer's or the contract's `output_schema`, or a result not signed by the
 * provider's address; its failure is counted against the offer and the next one is tried. The
 * first valid answer attaches the provider, the attempts, the answering offer's price and the
 * credit of that provider's share (`runtime.earnings`, run by the Executor only once nothing can
 * fail any more); when every attempt failed, the last failure is thrown (the execution is FAILED
 * and refunded; nobody is credited).
 */
export function contractCapability(contract: Contract, runtime: ProviderRuntime): ExecutableCapability {
  const { id } = contract;
  const definingOffer = contract.contract.offer;
  const validateInput = compileJsonSchema(definingOffer.input_schema, 'input_schema');
  const validateContractOutput = compileJsonSchema(definingOffer.output_schema, 'output_schema');
  const offers = new Map(
    contract.offers.map((o) => [o.record.provider_id, { ...o, validateOutput: compileJsonSchema(o.offer.output_schema, 'output_schema') }]),
  );
  let lowest = usdcBaseUnits(definingOffer.price_usdc);
  for (const o of contract.offers) if (usdcBaseUnits(o.offer.price_usdc) < lowest) lowest = usdcBaseUnits(o.offer.price_usdc);
  const input = z.unknown().superRefine((value, ctx) => {
    if (validateInput(value)) return;
    for (const issue of schemaIssues(validateInput.errors)) ctx.addIssue({ code: 'custom', path: issue.path, message: `${issue.message} (${issue.code})` });
  });
  const names = [...new Set(contract.offers.map((o) => o.record.name))];

  async function attempt(
    o: OfferOf & { validateOutput: ReturnType<typeof compileJsonSchema> },
    value: unknown,
    executionId: string,
    timeoutMs: number,
  ): Promise<Attempt> {
    const outcome = await runtime.client.call(
      o.record.endpoint,
      o.record.secret,
      { capability_id: id, execution_id: executionId, input: value },
      { timeoutMs, messageId: executionId },
    );
    if (!outcome.ok) return failureOf(outcome);
    const parsed = ProviderCallResponse.safeParse(outcome.body);
    const result = parsed.success ? parsed.data.result : undefined;
    if (
      !parsed.success ||
      result === null ||
      typeof result !== 'object' ||
      Array.isArray(result) ||
      !o.validateOutput(result) ||
      !validateContractOutput(result)
    ) {
      return {
        ok: false,
        outcome: 'invalid_output',
        failure: new CapabilityFailure('provider_invalid_output', "The provider's result does not match its output_schema; the payment is refunded.", 502),
        ms: outcome.ms,
      };
    }
    // the provider's own signature over this result, by its registered address: evidence for disputes
    const signature = parsed.data.signature as Hex | undefined;
    if (!signature || !(await verifyResultSignature({ address: o.record.address, executionId, result, signature }))) {
      return {
        ok: false,
        outcome: 'invalid_signature',
        failure: new CapabilityFailure(
          'provider_unsigned_result',
          "The provider's result is not signed by its registered address (EIP-191); the payment is refunded.",
          502,
        ),
        ms: outcome.ms,
      };
    }
    return { ok: true, result: result as Record<string, unknown>, signature, ms: outcome.ms };
  }

  return defineCapability({
    id: id as `${string}.${string}`,
    product: id.split('.')[0] as ProviderOffer['product'],
    name: title(id),
    description: definingOffer.description,
    ...PAID_THROUGH_EXECUTE,
    docs: null,
    provider: contract.contract.record.name,
    built: true,
    price: { base_units: lowest, unit: 'call' },
    input,
    output: z.record(z.string(), z.unknown()),
    inputJsonSchema: definingOffer.input_schema,
    outputJsonSchema: definingOffer.output_schema,
    accepts_objective: contract.offers.every((o) => o.offer.accepts_objective),
    example: { request: { capability_id: id, input: definingOffer.example_request }, response: null },
    // cheapest first, as /registry lists them
    offers: contract.offers
      .map((o) => ({ provider_id: o.record.provider_id, provider: o.record.name, price_usdc: o.offer.price_usdc }))
      .sort((a, b) => Number(usdcBaseUnits(a.price_usdc) - usdcBaseUnits(b.price_usdc))),
    notes:
      names.length === 1
        ? `Run by the third-party provider ${names[0]}; the gateway routes, takes payment and refunds failures.`
        : `Offered by ${names.length} third-party providers (${names.join(', ')}); the gateway routes each call to one offer, fails over to the next, and refunds what the answering offer did not cost.`,
    async run(value: unknown, _deps, call?: CapabilityCall) {
      const executionId = call?.executionId ?? 'exe_unknown';
      const paid = call?.amount !== undefined ? BigInt(call.amount) : null;
      // a route given by the execute path (routing, or a quote) was priced before payment: it is tried
      // whatever the offers' prices are now, and never earns more than was paid (a quote holds its price)
      const explicit = call?.route !== undefined;
      let route = call?.route;
      if (!route) {
        const ranked = await routeContract(contract, { prefer: 'trusted', max_price: paid }, runtime);
        if (!ranked.ok && ranked.reason === 'offer_suspended') throw suspendedFailure();
        if (!ranked.ok) throw new CapabilityFailure('no_route', 'No offer of this capability can answer now; the payment is refunded.', 503);
        route = ranked.offers.map((o) => o.provider_id);
      }
      const fitting = route
        .map((p) => offers.get(p))
        .filter((o) => o !== undefined)
        .filter((o) => explicit || paid === null || usdcBaseUnits(o.offer.price_usdc) <= paid);
      // a route fixed before (a quote's, or the execute path's before payment) is checked again here: an offer suspended since is not called
      const { kept: tried, suspended } = await unsuspendedOffers(
        id,
        fitting.map((o) => ({ ...o, provider_id: o.record.provider_id })),
        runtime,
      );
      if (tried.length === 0 && suspended) throw suspendedFailure();
      if (tried.length === 0) throw new CapabilityFailure('no_route', 'No offer of this capability can answer now; the payment is refunded.', 503);
      const deadline = performance.now() + Math.max(...tried.map((o) => o.offer.timeout_ms));
      const attempts: RoutingAttempt[] = [];
      let last: CapabilityFailure | undefined;
      for (const o of tried) {
        const remaining = Math.floor(deadline - performance.now());
        if (remaining < 1) break;
        const a = await attempt(o, value, executionId, Math.min(o.offer.timeout_ms, remaining));
        attempts.push({ provider_id: o.record.provider_id, outcome: a.ok ? 'succeeded' : a.outcome, latency_ms: Math.round(a.ms) });
        await Promise.all([
          runtime.stats.recordCall(id, o.record.provider_id, a.ok, a.ms).catch(() => undefined),
          runtime.store.countCall(id, a.ok).catch(() => undefined),
          // every paid attempt's outcome is evidence for the offer's trust score (never failing the call)
          runtime.trust
            ?.record(
              { provider_id: o.record.provider_id, listed_at: o.record.created_at, capability_id: id, timeout_ms: o.offer.timeout_ms },
              { source: 'execution', outcome: a.ok ? 'succeeded' : a.outcome, latency_ms: a.ms },
            )
            .catch(() => undefined),
        ]);
        if (!a.ok) {
          last = a.failure;
          continue;
        }
        const listed = usdcBaseUnits(o.offer.price_usdc);
        const price = paid !== null && listed > paid ? paid : listed;
        // the payment may send the share elsewhere (a voucher: credited from claimed funds only)
        const earnings = call?.earnings ?? runtime.earnings;
        const credit =
          call && earnings && call.amount !== undefined
            ? () =>
                earnings.credit({
                  execution_id: executionId,
                  provider_id: o.record.provider_id,
                  provider_address: o.record.address,
                  capability_id: id,
                  payer: call.payer as `0x${string}`,
                  price,
                  payment_tx_hash: call.paymentTxHash as `0x${string}`,
                })
            : undefined;
        const evidence: CallEvidence = {
          provider_signature: a.signature,
          provider: { provider_id: o.record.provider_id, name: o.record.name },
          attempts,
          price,
          ...(credit ? { credit } : {}),
        };
        // the share is credited by the Executor once the call's outcome is decided (see CapabilityCall.attach)
        if (call?.attach) call.attach(evidence);
        else await credit?.();
        return a.result;
      }
      call?.attach?.({ attempts });
      throw last ?? new CapabilityFailure('provider_timeout', 'No offer answered within the deadline; the payment is refunded.', 504);
    },
  });
}

/** Every offer that could run is suspended (docs/trust-v1.md "Suspension"): 503, the payment refunded, nobody credited. */
function suspendedFailure(): CapabilityFailure {
  return new CapabilityFailure(
    'offer_suspended',
    'Every offer of this capability is suspended from routing (trust score under the threshold); the payment is refunded.',
    503,
  );
}

/** The capability of a single offer: a contract with this one offer ({@link contractCapability}). */
export function providerCapability(record: ProviderRecord, offer: ProviderOffer, runtime: ProviderRuntime): ExecutableCapability {
  const of = { record, offer };
  return contractCapability({ id: offerCapabilityId(offer), contract: of, offers: [of] }, runtime);
}
