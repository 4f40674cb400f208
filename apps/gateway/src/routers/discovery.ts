import { DiscoveryResourcesQuery, DiscoveryResourcesResponse, HealthDocument, LatencySeriesDocument, LegacyRegistry, RegistryDocument } from '@acg/schemas';
import { z } from 'zod';
import type { Rendered } from '../discovery.js';
import { discoveryResourcesOf } from '../discoveryResources.js';
import { header, type Context } from '../trpc/context.js';
import { router } from '../trpc/init.js';
import { publicProcedure } from '../trpc/procedures.js';
import { problem } from '../trpc/problem.js';

/** Applies caching headers (docs/decisions.md: public 60 s + ETag; 304 on If-None-Match) and returns the value. */
function cacheable<T>(ctx: Context, doc: Pick<Rendered<T>, 'value' | 'etag'>, cacheControl: string): T {
  ctx.responseHeaders['Cache-Control'] = cacheControl;
  ctx.responseHeaders.ETag = doc.etag;
  const inm = header(ctx, 'if-none-match');
  if (inm?.split(',').some((t) => t.trim() === doc.etag || t.trim() === '*')) ctx.response.status = 304;
  return doc.value;
}

const NoInput = z.object({});

/** Discovery documents, no authentication (docs/spec-notes.md 4 "Discovery", 5). */
export const discoveryRouter = router({
  catalog: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/gateway-catalog.json',
        tags: ['discovery'],
        summary: 'Full capability catalog (docs/spec-notes.md 2.1, JSON Schema 2020-12 shape)',
        responseHeaders: z.object({ ETag: z.string(), 'Cache-Control': z.string() }),
      },
    })
    .input(NoInput)
    .output(RegistryDocument)
    .query(async ({ ctx }) => cacheable(ctx, await ctx.services.discovery.catalog(), 'public, max-age=60')),

  registry: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/registry',
        tags: ['discovery'],
        summary: 'Legacy registry with price, schemas and examples per capability (docs/spec-notes.md 2.3); cached 60 s',
        responseHeaders: z.object({ ETag: z.string(), 'Cache-Control': z.string() }),
      },
    })
    .input(NoInput)
    .output(LegacyRegistry)
    .query(async ({ ctx }) => cacheable(ctx, await ctx.services.discovery.registry(), 'public, max-age=60')),

  resources: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/discovery/resources',
        tags: ['discovery'],
        summary: "Every paid resource in x402's facilitator discovery API format (Bazaar); cached 60 s",
        description:
          'x402 specification v2 §8.1, read unchanged by withBazaar(new HTTPFacilitatorClient({url})).extensions.bazaar.listResources() of @x402/extensions/bazaar. Items {resource, type (http or mcp), x402Version, accepts, lastUpdated, description, mimeType, metadata (input and output descriptions with JSON Schemas, method or toolName, capability_id), extensions.bazaar}; pagination {limit, offset, total}. Query: type, limit 1-100 (default 20), offset (default 0), payTo, scheme, network, extensions.',
        responseHeaders: z.object({ ETag: z.string(), 'Cache-Control': z.string() }),
        errorResponses: { 400: 'Bad query parameter (limit outside 1-100, negative offset, ...): problem+json with errors' },
      },
    })
    .input(DiscoveryResourcesQuery)
    .output(DiscoveryResourcesResponse)
    .query(({ ctx, input }) => cacheable(ctx, discoveryResourcesOf(ctx.services).rendered(input), 'public, max-age=60')),

  jwks: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/.well-known/jwks.json',
        tags: ['discovery'],
        summary: 'Receipt keys (RFC 7517 JWKS): the Ed25519 key of execution proofs and the secp256k1 key of x402 offers and receipts',
        description:
          'Each key has kid, use "sig" and alg (EdDSA, ES256K). Every proof names its kid in the JWS header; retired keys stay listed while their proofs should verify.',
        errorResponses: { 404: 'This gateway signs no proofs (no receipt keys configured)' },
      },
    })
    .input(NoInput)
    .output(z.object({ keys: z.array(z.looseObject({ kty: z.string(), kid: z.string(), use: z.literal('sig'), alg: z.string() })) }))
    .query(({ ctx }) => {
      const receipts = ctx.services.receipts;
      if (!receipts) throw problem(404, 'This gateway signs no proofs: no receipt keys are configured.');
      ctx.responseHeaders['Cache-Control'] = 'public, max-age=300';
      return receipts.jwks as { keys: { kty: string; kid: string; use: 'sig'; alg: string }[] };
    }),

  health: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/status/health',
        tags: ['discovery'],
        summary: 'Aggregated health telemetry (docs/spec-notes.md 2.4); server cache 10 s, no client cache',
      },
    })
    .input(NoInput)
    .output(HealthDocument)
    .query(async ({ ctx }) => {
      const doc = await ctx.services.discovery.health();
      ctx.responseHeaders['Cache-Control'] = 'no-store';
      return doc.value;
    }),

  series: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/status/series',
        tags: ['discovery'],
        summary: 'Latency per minute over the last hour, per capability (the /status charts); server cache 10 s, no client cache',
        description:
          'One point per minute (t: unix seconds of the minute start; p50, p99: milliseconds, nearest rank; samples; errors), oldest first, from samples stored in Redis as executions, probes and webhook deliveries happen. window: the percentiles over the whole hour.',
      },
    })
    .input(NoInput)
    .output(LatencySeriesDocument)
    .query(async ({ ctx }) => {
      const doc = await ctx.services.discovery.series();
      ctx.responseHeaders['Cache-Control'] = 'no-store';
      return doc.value;
    }),
});
