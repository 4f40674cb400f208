import { offerSubject, ProviderError, type ProviderRecord } from '@acg/provider-directory';
import {
  Address,
  ProviderChallenge,
  ProviderChallengeRequest,
  ProviderRegistered,
  ProviderRegistration,
  ProviderView,
  type ProbeRecord,
  type ProviderView as ProviderViewType,
} from '@acg/schemas';
import type { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { router } from '../trpc/init.js';
import { bearerProcedure, domainErrors, publicProcedure } from '../trpc/procedures.js';
import { problem } from '../trpc/problem.js';
import type { Services } from '../services.js';
import { offerTrustView } from '../trust.js';

/** The RFC 9457 problem of a provider error (its status, `code`, and extras such as `provider_id` or `errors`). */
function providerProblem(e: unknown): TRPCError | undefined {
  if (e instanceof ProviderError) return problem(e.status, e.message, { reason: e.code, ...e.extra });
  return undefined;
}

/** Provider procedures: never cached, provider errors mapped to problems. */
const providerProcedure = publicProcedure.use(domainErrors(providerProblem));

const ProviderIdParam = z.object({ provider_id: z.string().min(1).max(100).describe('provider id, prv_ + ULID') });

const onboardingErrors = {
  400: 'Invalid body, JSON Schema (a pattern RE2 does not support included) or example_request (problem+json with errors), or an endpoint refused by the SSRF rules',
  401: 'The challenge is unknown, used, expired, or not signed by address (EIP-191); checked before any schema work',
  403: 'The challenge was signed for another action, provider or body (code challenge_mismatch)',
  413: 'A JSON Schema is larger than 64 KiB of JSON (code schema_too_large)',
  409: 'A capability id is taken (code capability_exists), or the address already has a provider (code provider_exists, with provider_id)',
  422: 'The endpoint got no HTTP answer to GET, or a JSON Schema nests deeper than 32 (code schema_too_deep)',
};

/** Probe status of a provider capability as the catalog derives it. */
function statusOf(probe: ProbeRecord | undefined): 'PILOT' | 'LIVE' | 'STALE' {
  if (!probe) return 'PILOT';
  return probe.ok ? 'LIVE' : 'STALE';
}

/**
 * After a change: logs it (`event`, e.g. "provider updated", with `fields`), then reloads this
 * process's catalog now and probes the new offers soon (so they need not wait a round to go LIVE).
 */
async function afterChange(services: Services, event: string, fields: { provider_id: string } & Record<string, unknown>): Promise<void> {
  services.log.info(fields, event);
  await services.providers.directory.reload().catch(() => undefined);
  const probe = services.providers.probe;
  if (probe) {
    void probe(fields.provider_id)
      .then(() => services.discovery.invalidate())
      .catch(() => undefined);
  }
}

/**
 * `GET /api/v1/providers/{id}`: the provider, its capabilities' status and stats, and its money
 * (from the provider ledger when configured). Also what the provider dashboard page renders.
 */
export async function providerView(services: Services, record: ProviderRecord): Promise<ProviderViewType> {
  const probes = await services.probes.all();
  const capabilities = await Promise.all(
    record.offers.map(async (offer) => {
      const id = `${offer.product}.${offer.name}`;
      const subject = offerSubject(record, id)!;
      const [counts, latency, trust] = await Promise.all([
        services.providers.store.counts(id),
        services.telemetry.summary(id),
        record.status === 'active' ? services.providers.trust.offerTrust(subject) : undefined,
      ]);
      return {
        id,
        status: record.status === 'active' ? statusOf(probes[id]) : ('PILOT' as const),
        price_usdc: offer.price_usdc,
        stats: { ...counts, latency_ms_p50: latency.p50, latency_ms_p99: latency.p99 },
        // score, tier and why the offer is suspended, if it is (docs/trust-v1.md)
        ...(trust ? { trust: offerTrustView(trust, services.config.providers.disputeWindowSeconds) } : {}),
      };
    }),
  );
  const money = services.providerMoney;
  const [balance, payouts, disputes] = money
    ? await Promise.all([money.balance(record.provider_id), money.payouts(record.provider_id), money.disputesOfProvider(record.provider_id)])
    : [{ held: '0', available: '0', paid: '0' }, [], []];
  return {
    provider_id: record.provider_id,
    name: record.name,
    address: record.address,
    endpoint: record.endpoint,
    status: record.status,
    created_at: record.created_at,
    capabilities,
    balance,
    payouts,
    disputes,
  };
}

/**
 * Third-party providers (docs/spec-notes.md 1; docs/decisions.md "Providers"): EIP-191 challenge, registration, update
 * and retirement (each with a fresh single-use signed challenge), and the provider's own view
 * (SIWE bearer token of its address).
 */
export const providersRouter = router({
  challenge: providerProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/providers/challenge',
        tags: ['providers'],
        summary: 'Get a single-use EIP-191 challenge to register, change or retire a provider',
        description:
          'Send the action (register, update, retire), provider_id for update and retire, and for register and update the exact name, endpoint and capabilities you will send. The message names this gateway, the action, the provider, the SHA-256 of the RFC 8785 canonical JSON of {name, endpoint, capabilities}, the address, a nonce and the issue time. Sign it with personal_sign (EIP-191) and send it within 10 minutes with that action and body: POST /api/v1/providers, PUT or DELETE /api/v1/providers/{provider_id}. A signature for another action, provider or body is refused (403 challenge_mismatch). Each challenge verifies once.',
        errorResponses: { 400: 'Invalid address, action, or a field missing or extra for the action' },
      },
    })
    .input(ProviderChallengeRequest)
    .output(ProviderChallenge)
    .mutation(({ ctx, input }) => ctx.services.providers.onboarding.challenge(input, new URL(ctx.services.publicBaseUrl()).host)),

  register: providerProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/providers',
        tags: ['providers'],
        summary: 'Register as a provider: an endpoint, a payout address and capability offers',
        description:
          'Verifies the signed challenge (EIP-191), each offer (JSON Schema 2020-12 input_schema and output_schema, example_request valid against input_schema, id <product>.<name> unique), the endpoint (https; SSRF rules; GET must get an HTTP answer). Answers 201 with the signing_secret (shown once): every call to POST {endpoint} carries Standard Webhooks headers signed with it. Capabilities are PILOT until the prober calls them with example_request, then LIVE.',
        errorResponses: onboardingErrors,
      },
    })
    .input(ProviderRegistration)
    .output(ProviderRegistered)
    .mutation(async ({ ctx, input }) => {
      const registered = await ctx.services.providers.onboarding.register(input);
      ctx.response.status = 201;
      ctx.responseHeaders.Location = `/api/v1/providers/${registered.provider_id}`;
      await afterChange(ctx.services, 'provider registered', {
        provider_id: registered.provider_id,
        address: registered.address,
        capabilities: registered.capabilities.map((c) => c.id),
      });
      return registered;
    }),

  update: providerProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/v1/providers/{provider_id}',
        tags: ['providers'],
        summary: "Replace a provider's name, endpoint and offers (fresh signed challenge); rotates the signing secret",
        errorResponses: { ...onboardingErrors, 403: 'Signed by another address, or for another action, provider or body', 404: 'Unknown or retired provider' },
      },
    })
    .input(ProviderRegistration.extend(ProviderIdParam.shape))
    .output(ProviderRegistered)
    .mutation(async ({ ctx, input }) => {
      const { provider_id, ...body } = input;
      const registered = await ctx.services.providers.onboarding.update(provider_id, body);
      await afterChange(ctx.services, 'provider updated', { provider_id, capabilities: registered.capabilities.map((c) => c.id) });
      return registered;
    }),

  retire: providerProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/v1/providers/{provider_id}',
        tags: ['providers'],
        summary: 'Retire a provider (fresh signed challenge in the query: address, message, signature)',
        description: 'Its capabilities leave the catalog at once; money already earned is still paid out after the dispute window.',
        errorResponses: {
          400: 'Invalid query',
          401: 'Bad challenge or signature',
          403: 'Signed by another address, or a challenge for another action or provider',
          404: 'Unknown or retired provider',
        },
      },
    })
    .input(ProviderIdParam.extend({ address: Address, message: z.string().min(1).max(2000), signature: z.string().regex(/^0x[0-9a-fA-F]*$/) }))
    .output(z.object({ provider_id: z.string(), status: z.literal('retired') }))
    .mutation(async ({ ctx, input }) => {
      const { provider_id, ...signed } = input;
      const out = await ctx.services.providers.onboarding.retire(provider_id, signed);
      await afterChange(ctx.services, 'provider retired', { provider_id });
      return out;
    }),

  get: bearerProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/providers/{provider_id}',
        tags: ['providers'],
        summary: "A provider's capabilities, stats, balances (held, available, paid), payouts and disputes",
        description:
          'Bearer token of the provider address (Sign-In with Ethereum: POST /v1/auth/nonce, POST /v1/auth/token). Amounts are integer USDC base units.',
        protect: true,
        errorResponses: { 401: 'Missing or invalid bearer token', 404: 'Unknown provider, or not yours' },
      },
    })
    .input(ProviderIdParam)
    .output(ProviderView)
    .query(async ({ ctx, input }) => {
      ctx.responseHeaders['Cache-Control'] = 'no-store';
      const record = await ctx.services.providers.store.get(input.provider_id);
      // another account's provider is as unknown as a missing one
      if (!record || record.address.toLowerCase() !== ctx.account.toLowerCase()) throw problem(404, `No provider ${input.provider_id} for this account.`);
      return providerView(ctx.services, record);
    }),
});
