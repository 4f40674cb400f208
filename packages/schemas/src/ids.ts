import type { z } from 'zod';
import { prefixedUlid } from './primitives.js';

/**
 * Ids of the resources that other resources point to (`<prefix>_<ULID>`, see `prefixedUlid`):
 * an execution names its job and its quote, an offer, a routing attempt and a trust attestation
 * name their provider. They live here, in a module that imports no other schema module, so that
 * every module can import them without an import cycle.
 */

/** Execution id: `exe_` + ULID, e.g. `exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8T` (docs/decisions.md "x402 payments"). */
export const ExecutionId = prefixedUlid('exe');
export type ExecutionId = z.infer<typeof ExecutionId>;

/** Job id: `job_` + ULID (docs/decisions.md "Jobs"). */
export const JobId = prefixedUlid('job');
export type JobId = z.infer<typeof JobId>;

/** Quote id: `qte_` + ULID (apps/gateway README "Quotes"). */
export const QuoteId = prefixedUlid('qte');

/** Provider id: `prv_` + ULID (docs/decisions.md "Providers"). */
export const ProviderId = prefixedUlid('prv');
export type ProviderId = z.infer<typeof ProviderId>;
