import { AttestationResponse } from '@acg/schemas';
import { z } from 'zod';
import { router } from '../trpc/init.js';
import { publicProcedure } from '../trpc/procedures.js';
import { problem } from '../trpc/problem.js';
import { signAttestation } from '../trust.js';

/** Trust attestations (packages/provider-directory README "Trust scores"; docs/trust-v1.md). */
export const trustRouter = router({
  attestation: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/providers/{provider_id}/attestation',
        tags: ['providers'],
        summary: "A provider's trust-v2 scores, signed with the receipt key",
        description:
          'Public. {attestation}: a JWS compact (alg EdDSA, kid of /.well-known/jwks.json, typ acg-attestation+jws) of {provider_id, address, formula: "trust-v1", scores: [{capability_id, score, inputs, counts}], issued_at}. The formula is on /llms.txt and in docs/trust-v1.md; verify with any JOSE library (jose: compactVerify with createRemoteJWKSet).',
        errorResponses: { 404: 'Unknown or retired provider', 503: 'No receipt key is loaded (receipts_unavailable)' },
      },
    })
    .input(z.object({ provider_id: z.string().min(1).max(100).describe('provider id, prv_ + ULID') }))
    .output(AttestationResponse)
    .query(async ({ ctx, input }) => {
      ctx.responseHeaders['Cache-Control'] = 'no-store';
      const record = await ctx.services.providers.store.get(input.provider_id);
      if (record?.status !== 'active') throw problem(404, `No active provider ${input.provider_id}.`);
      const key = ctx.services.receipts?.jwsKey;
      if (!key) throw problem(503, 'Attestations are signed with the receipt key, which this gateway has not loaded.', { reason: 'receipts_unavailable' });
      const { attestation } = await signAttestation(key, record, ctx.services.providers.trust);
      return { attestation };
    }),
});
