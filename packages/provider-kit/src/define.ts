import {
  CodedFailure,
  InvalidDefinitionError,
  OfferName,
  OfferProduct,
  OfferTimeoutMs,
  ProviderOffer,
  toJsonSchema,
  type ProviderOfferInput,
} from '@acg/schemas';
import type { z } from 'zod';

/** What a capability's `run` learns about the call besides its input. */
export interface ProviderCallContext {
  /** The gateway's execution id (`webhook-id`, `exe_<ULID>`; the gateway's probes carry one too and are not told apart). */
  executionId: string;
  /** Aborted when the call's `timeout_ms` has passed or the gateway hung up: stop work and throw. */
  signal: AbortSignal;
}

/**
 * A failure `run` wants the gateway to see as is: `status` (4xx/5xx, default 422), a stable
 * snake_case `code` and a `message` safe to show (no upstream text, URLs or keys). Any other
 * error thrown by `run` answers 500 with a generic detail (and is logged in full). Either way the
 * gateway fails the execution and refunds the buyer.
 */
export class ProviderRunError extends CodedFailure {
  override name = 'ProviderRunError';
  constructor(code: string, message: string, status = 422, cause?: unknown) {
    super(code, message, status, cause);
  }
}

/** Thrown by {@link defineProviderCapability} when a definition cannot be offered (a bug in the definition). */
export class InvalidProviderCapabilityError extends InvalidDefinitionError {
  override name = 'InvalidProviderCapabilityError';
  constructor(capabilityId: string, shortMessage: string) {
    super(capabilityId, shortMessage, 'provider capability');
  }
}

/** What {@link defineProviderCapability} takes. */
export interface ProviderCapabilityParameters<I extends z.ZodType, O extends z.ZodType> {
  /** `<name>` of the capability id: `[a-z][a-z0-9_]*`, at most 48 characters. */
  name: string;
  /** `<product>` of the capability id: `intelligence` (default) or `mev` (schema `OfferProduct`). */
  product?: z.input<typeof OfferProduct>;
  /** One or two sentences for the catalog, at most 500 characters. */
  description: string;
  /** Price per call, decimal USDC with at most 6 decimals, > 0, e.g. `'0.002'`. */
  price_usdc: string;
  /** zod schema of `input`; its JSON Schema 2020-12 (io: input) is the offer's `input_schema`. */
  input: I;
  /** zod schema of `result`; its JSON Schema 2020-12 (io: output) is the offer's `output_schema`. The kit checks every result against it. */
  output: O;
  /** A valid input the gateway's prober sends (free) to keep the capability LIVE. */
  example_request: z.input<I>;
  /** Per-call budget in milliseconds, 1000..120000 (default 30000); the gateway gives up after it. */
  timeout_ms?: number;
  /** True when `{objective: string}` is a valid input (jobs without steps send it); checked against `input`. */
  accepts_objective?: boolean;
  /** The work: parsed input in, output out. Throw {@link ProviderRunError} for a failure the buyer may see. */
  run(input: z.output<I>, ctx: ProviderCallContext): Promise<z.input<O>>;
}

/** A capability a provider serves: the definition plus its `id` (`<product>.<name>`) and resolved defaults. */
export interface ProviderCapability<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType>
  extends Readonly<Required<Omit<ProviderCapabilityParameters<I, O>, 'run' | 'example_request'>>> {
  readonly id: string;
  readonly example_request: z.input<I>;
  run(input: z.output<I>, ctx: ProviderCallContext): Promise<z.input<O>>;
}

/**
 * Defines one capability of a provider (docs/decisions.md "Providers"). The id is `<product>.<name>`
 * (`product` defaults to `intelligence`); the offer sent at registration is built from it by
 * {@link toOffer} (JSON Schema 2020-12 from the zod schemas with `z.toJSONSchema`).
 *
 * @returns The frozen capability.
 * @throws {InvalidProviderCapabilityError} when the name, product, price, timeout or description
 *   breaks the offer rules (schema `ProviderOffer`), when `example_request` is not valid against
 *   `input`, when `accepts_objective` is true but `{objective}` is not a valid input, or when a
 *   schema has no JSON Schema form (e.g. `z.bigint()`, transforms).
 *
 * @example
 * const echo = defineProviderCapability({
 *   name: 'echo', description: 'Returns its input.', price_usdc: '0.001',
 *   input: z.object({ text: z.string() }), output: z.object({ text: z.string() }),
 *   example_request: { text: 'hi' },
 *   run: async ({ text }) => ({ text }),
 * }); // echo.id === 'intelligence.echo'
 */
export function defineProviderCapability<I extends z.ZodType, O extends z.ZodType>(parameters: ProviderCapabilityParameters<I, O>): ProviderCapability<I, O> {
  const product = parameters.product ?? 'intelligence';
  const id = `${product}.${parameters.name}`;
  const fail = (message: string): never => {
    throw new InvalidProviderCapabilityError(id, message);
  };
  const issue = (r: { success: boolean; error?: { issues: { message: string }[] } }) => r.error?.issues.map((i) => i.message).join('; ');
  const name = OfferName.safeParse(parameters.name);
  if (!name.success) fail(`name ${JSON.stringify(parameters.name)} ${issue(name)}`);
  const prod = OfferProduct.safeParse(product);
  if (!prod.success) fail(`product ${JSON.stringify(product)}: ${issue(prod)}`);
  const timeout = OfferTimeoutMs.safeParse(parameters.timeout_ms ?? 30_000);
  if (!timeout.success) fail(`timeout_ms must be an integer 1000..120000 ms`);
  const example = parameters.input.safeParse(parameters.example_request);
  if (!example.success) fail(`example_request is not a valid input: ${issue(example)}`);
  if (parameters.accepts_objective && !parameters.input.safeParse({ objective: 'Report the balances of 0x0000000000000000000000000000000000000001' }).success) {
    fail('accepts_objective is true but {objective: string} is not a valid input');
  }
  const capability: ProviderCapability<I, O> = Object.freeze({
    id,
    name: parameters.name,
    product,
    description: parameters.description,
    price_usdc: parameters.price_usdc,
    input: parameters.input,
    output: parameters.output,
    example_request: parameters.example_request,
    timeout_ms: parameters.timeout_ms ?? 30_000,
    accepts_objective: parameters.accepts_objective ?? false,
    run: parameters.run,
  });
  // the whole offer, JSON Schemas included, must pass the wire schema the gateway checks
  let offer: ProviderOfferInput;
  try {
    offer = toOffer(capability);
  } catch (e) {
    return fail(`its schemas have no JSON Schema form (${(e as Error).message})`);
  }
  const checked = ProviderOffer.safeParse(offer);
  if (!checked.success) fail(checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  return capability;
}

/**
 * The offer of one capability, as `POST /api/v1/providers` takes it (schema `ProviderOffer`):
 * `input_schema` is the JSON Schema 2020-12 of `input` for what a caller may send (io: input),
 * `output_schema` that of `output` (io: output).
 */
export function toOffer(capability: ProviderCapability): ProviderOfferInput {
  return {
    name: capability.name,
    product: capability.product,
    description: capability.description,
    price_usdc: capability.price_usdc,
    input_schema: toJsonSchema(capability.input, { io: 'input' }),
    output_schema: toJsonSchema(capability.output, { io: 'output' }),
    example_request: capability.example_request,
    timeout_ms: capability.timeout_ms,
    accepts_objective: capability.accepts_objective,
  };
}
