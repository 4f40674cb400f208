import { CapabilityFailure, type ExecutableCapability } from '@acg/capabilities';
import { isRedisUnavailable } from '@acg/redis';
import { ulid } from 'ulid';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { z } from 'zod';
import { routeBazaar } from '../paidRoute/bazaar.js';
import type { Context } from '../trpc/context.js';
import { bearerOrPaidProcedure } from '../trpc/procedures.js';
import { problem } from '../trpc/problem.js';

/** Seconds a caller is told to wait (`Retry-After`) when a capability answers 503 (e.g. an index not ready yet). */
export const CAPABILITY_RETRY_AFTER_SECONDS = 5;

/** What a route adds to the definition: its OpenAPI text and the prefix of its operation ids. */
export interface CapabilityRouteOptions {
  /** Prefix of the operation id each call gets (`<prefix>_<ULID>`), e.g. `liq`; it names the call in usage lines and refunds. */
  operationIdPrefix: string;
  /** OpenAPI documentation of the route (`method` and `path` come from the definition). */
  openapi: Omit<NonNullable<OpenApiMeta['openapi']>, 'method' | 'path'>;
}

/** The REST path of a definition's `{base_url}` endpoint, e.g. `/v1/liquidation-search`. Throws for an endpoint elsewhere (a bug in the binding). */
export function capabilityPath(definition: ExecutableCapability): `/${string}` {
  if (!definition.endpoint.startsWith('{base_url}/'))
    throw new Error(`capability ${definition.id}: its endpoint ${definition.endpoint} is not on this gateway`);
  return definition.endpoint.slice('{base_url}'.length) as `/${string}`;
}

/**
 * A capability's failure as the route's problem: its status and safe message (503 with `Retry-After`;
 * a 422 refusal also carries its stable `reason` code, e.g. `not_liquidatable`); a Redis outage keeps the gateway's own 503.
 */
function failureProblem(e: unknown): unknown {
  if (!(e instanceof CapabilityFailure)) return e;
  if (isRedisUnavailable(e.cause)) return e.cause;
  return problem(
    e.status,
    e.shortMessage,
    e.status === 422 ? { reason: e.code } : {},
    e.status === 503 ? { 'Retry-After': String(CAPABILITY_RETRY_AFTER_SECONDS) } : {},
  );
}

/**
 * The bearer-or-x402 REST route of an executable capability, bound to its one definition
 * (packages/capabilities README, "One definition per capability"): path and method from
 * `endpoint`/`method`, input and output from its zod schemas, price from `price` (USDC base units
 * per call), the usage line named by its `id`, the x402 Bazaar declaration from its schemas and
 * example. Before any payment: input validation (400), `precondition` (422) and `ready` (its
 * {@link CapabilityFailure}'s status, e.g. 503 with `Retry-After`; nothing charged). After payment:
 * `run`, whose failure answers its status and is credited back (bearer) or not charged (x402). An
 * idempotent replay returns the stored answer.
 *
 * @example
 * export const liquidationsRouter = router({ search: capabilityRoute(liquidationSearch, { operationIdPrefix: 'liq', openapi: { tags: ['liquidations'] } }) });
 */
export function capabilityRoute<I extends z.ZodType>(definition: ExecutableCapability<I>, options: CapabilityRouteOptions) {
  const path = capabilityPath(definition as unknown as ExecutableCapability);
  const check = async (input: z.output<I>, ctx: Context): Promise<void> => {
    const deps = ctx.services.capabilityDeps;
    const unmet = definition.precondition?.(input, deps);
    if (unmet) throw problem(422, unmet);
    try {
      await definition.ready?.(input, deps);
    } catch (e) {
      throw failureProblem(e);
    }
  };
  const procedure = bearerOrPaidProcedure<z.output<I>>({
    input: definition.input as unknown as z.ZodType<z.output<I>>,
    check,
    route: definition.id.slice(definition.id.indexOf('.') + 1),
    path,
    item: definition.id,
    price: () => definition.price.base_units,
    description: () => `${definition.name} (${definition.id})`,
    extensions: () => routeBazaar(definition as unknown as ExecutableCapability),
    newOperationId: () => `${options.operationIdPrefix}_${ulid()}`,
  })
    .meta({ openapi: { ...options.openapi, method: definition.method, path } })
    // typed as unknown here: a generic output schema's types do not reduce (the validator still parses with the definition's schema)
    .output(definition.output as z.ZodType<unknown>);
  const resolve = async (ctx: Context & { replay?: unknown }, input: z.output<I>): Promise<unknown> => {
    // the procedure's output validator parses what the resolver returns (tRPC `.output`)
    if (ctx.replay) return ctx.replay;
    ctx.responseHeaders['Cache-Control'] = 'no-store';
    try {
      return await definition.run(input, ctx.services.capabilityDeps);
    } catch (e) {
      throw failureProblem(e);
    }
  };
  return definition.method === 'GET'
    ? procedure.query((opts) => resolve(opts.ctx, opts.input as z.output<I>))
    : procedure.mutation((opts) => resolve(opts.ctx, opts.input as z.output<I>));
}
