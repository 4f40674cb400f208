import type { RedisKeys } from '@acg/redis';
import { CodedFailure, InvalidDefinitionError, type Auth, type CapabilityId, type ChainName, type PriceUnit, type Product, type Surface } from '@acg/schemas';
import type { Redis } from 'ioredis';
import type { PublicClient } from 'viem';
import type { z } from 'zod';

/** Chains a capability may read, by spec chain name (schema `ChainName`). */
export type { ChainName };

/**
 * How a capability takes x402 payment: `accepted` (now), `planned` (spec says "x402 planned"),
 * `none` (free, or paid another way).
 */
export type X402Mode = 'accepted' | 'planned' | 'none';

/** What one call costs: `base_units` of USDC (6 decimals: 1000n = 0.001 USDC) per `unit`. */
export interface CapabilityPrice {
  /** USDC base units (integer, 6 decimals), never negative. */
  base_units: bigint;
  /** What one price buys: a `call`, an `event` delivered, a `bundle` accepted. */
  unit: PriceUnit;
}

/** What a capability's `run` and `precondition` may use: chain clients by spec chain name, and the deployment's Redis. */
export interface CapabilityDeps {
  /** A viem public client for `chain`, or undefined when that chain is not configured. */
  chainClient(chain: ChainName): PublicClient | undefined;
  /** The deployment's Redis and key names, for capabilities that keep shared state (e.g. `builder.send_bundle`'s orderflow pool). */
  redis?: Redis;
  keys?: RedisKeys;
}

/** The execution a `run` belongs to: its id and who paid (the x402 payer is e.g. the searcher identity of a bundle). */
export interface CapabilityCall {
  executionId: string;
  /** Address that paid (x402 `from`, or the job's payer). */
  payer: string;
  /** Settlement transaction hash of the payment. */
  paymentTxHash: string;
  /** What this call was charged: integer string, USDC base units (6 decimals). */
  amount?: string;
  /** Set when a job step runs it (paid from the job's budget). */
  jobId?: string;
  /**
   * Adds evidence to the execution record, e.g. a provider's EIP-191 signature over its result
   * (`provider_signature`; packages/receipts README), and the call's `credit` (e.g. the
   * provider's share): the Executor runs it only once everything that can throw succeeded (output
   * validation, canonicalization and signing of the proof), just before the SUCCEEDED record is
   * stored, so a credit never outlives a failed call (a later failure is reversed with its refund).
   * Set by the Executor.
   */
  attach?(evidence: CallEvidence): void;
  /**
   * Where this call's provider share goes instead of the provider's default earnings (the provider
   * ledger), when the payment says so: a call paid by an x402 `batch-settlement` voucher hands its
   * share to the channel credits, paid only once the voucher is claimed and settled
   * (docs/decisions.md "batch-settlement"). Set by the Executor from the call's charge.
   */
  earnings?: ShareEarnings;
  /**
   * The provider ids whose offers may answer, in the order to try them (a capability offered by
   * several providers; docs/marketplace.md "Routing"), as the caller's `routing` ranked them before
   * payment. Undefined: the capability's own default order.
   */
  route?: readonly string[];
}

/**
 * Where a provider's share of one call goes (structurally the provider directory's `ProviderEarnings`):
 * `price` is the answering offer's price in USDC base units (6 decimals), `payment_tx_hash` the
 * settlement's transaction (`0x` for an off-chain voucher).
 */
export interface ShareEarnings {
  credit(e: ProviderCredit): Promise<unknown>;
}

/** What the provider ledger is told after a paid provider call succeeded (packages/provider-directory README, money). */
export interface ProviderCredit {
  execution_id: string;
  provider_id: string;
  provider_address: `0x${string}`;
  capability_id: string;
  payer: `0x${string}`;
  /** the answering offer's price: USDC base units (6 decimals) */
  price: bigint;
  /** the settlement's transaction (`0x` for an off-chain voucher) */
  payment_tx_hash: `0x${string}`;
}

/**
 * What a run attaches to its execution ({@link CapabilityCall.attach}): the answering provider's
 * result signature, the credit of its share, and for an offered capability the provider that
 * answered, the offers tried (docs/marketplace.md "Routing") and the answering offer's `price`
 * (USDC base units; the rest of the payment is refunded).
 */
export interface CallEvidence {
  provider_signature?: string;
  credit?: () => Promise<unknown>;
  provider?: { provider_id: string; name: string };
  attempts?: { provider_id: string; outcome: 'succeeded' | 'failed' | 'timeout' | 'invalid_output' | 'invalid_signature'; latency_ms: number }[];
  price?: bigint;
}

/**
 * A capability failed after payment. `code` is snake_case and stable, `shortMessage` (= `message`)
 * is safe to show (never upstream text), `status` is the HTTP status to answer (502/503/504; 422
 * for input the upstream refused). The payment is refunded by the caller of `run`.
 */
export class CapabilityFailure extends CodedFailure {
  override name = 'CapabilityFailure';
  constructor(code: string, message: string, status = 502, cause?: unknown) {
    super(code, message, status, cause);
  }
}

/** Thrown by {@link defineCapability} when a definition contradicts itself (a bug in the definition, not a request). */
export class InvalidCapabilityDefinitionError extends InvalidDefinitionError {
  override name = 'InvalidCapabilityDefinitionError';
}

/** The example a catalog entry shows: a complete request (HTTP body, or query parameters for GET) and its response; null where none exists yet. */
export interface CapabilityExample {
  request: unknown;
  response: unknown;
}

/**
 * Everything about one capability (docs/decisions.md "Capabilities: one definition"): the catalog entry and
 * `/registry` fields, the zod schemas of its input and output, its price, and, for executable
 * capabilities, the code that runs it. Status and evidence are not here: the registry derives them
 * from `built` and the probe records.
 */
export interface CapabilityDefinition<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  /** `<product>.<name>`, stable (docs/spec-notes.md 2.2). */
  id: CapabilityId;
  product: Product;
  /** Short human label. */
  name: string;
  /** One or two quotable sentences. */
  description: string;
  surface: Surface;
  auth: Auth;
  /** HTTP method used on `endpoint` (JSON-RPC and webhook subscriptions are POSTs). */
  method: 'GET' | 'POST';
  /**
   * Canonical URL; a template where `{base_url}` and `{builder_url}` are replaced at build time,
   * or an absolute URL (providers registered at run time).
   */
  endpoint: string;
  /** Documentation URL template (same placeholders), or null. */
  docs: string | null;
  /** Party responsible; defaults to the registry's organization. */
  provider?: string;
  /** True once the capability is implemented and served; false means PLANNED whatever the probes say. */
  built: boolean;
  /** True exactly when `run` is given: it runs through `POST /api/v1/execute` and job steps with `capability_id` = `id`. */
  executable: boolean;
  x402: X402Mode;
  /** Price per `unit` in USDC base units; null when not fixed (e.g. `gateway.jobs`: the caller's budget). */
  price: CapabilityPrice | null;
  /**
   * zod schema of what the caller sends (the `input` of an executable capability; otherwise the
   * request body or query), or null when not specified yet.
   */
  input: I | null;
  /** zod schema of what the caller gets (the `result` of an executable capability), or null. */
  output: O | null;
  example: CapabilityExample;
  related_capabilities?: CapabilityId[];
  notes?: string;
  /**
   * A provider contract's offers when it was defined (docs/marketplace.md "Contracts and offers"),
   * cheapest first: `provider_id`, `provider` (display name) and `price_usdc` (decimal
   * USDC per call). Absent for the built-ins (the gateway's own single offer).
   */
  offers?: readonly { provider_id: string; provider: string; price_usdc: string }[];
  /**
   * JSON Schema 2020-12 published as `input_schema` instead of the one generated from `input`
   * (a provider's own schema, which `input` enforces with Ajv).
   */
  inputJsonSchema?: Record<string, unknown>;
  /** Like {@link inputJsonSchema}, for `output_schema`. */
  outputJsonSchema?: Record<string, unknown>;
  /**
   * True when `{objective}` is a valid input: a job without `steps` gives its `objective` to each
   * listed capability that accepts objectives (docs/spec-notes.md 2.8; docs/decisions.md "Providers", Jobs).
   */
  accepts_objective?: boolean;
  /**
   * Runs before payment with the parsed input: a string is the reason it cannot run here (422,
   * nothing charged), e.g. a chain that is not configured.
   */
  precondition?(input: z.output<I>, deps: CapabilityDeps): string | undefined;
  /**
   * Runs before payment on the capability's own REST route (after `precondition`): throws a
   * {@link CapabilityFailure} when the data it answers from is not ready yet (e.g. a chain not
   * indexed: 503, nothing charged), so a caller is not charged for an answer that cannot come.
   * Through `POST /api/v1/execute` the same condition surfaces from `run` (refunded).
   */
  ready?(input: z.output<I>, deps: CapabilityDeps): Promise<void>;
  /**
   * True when `run` only reads (no side effects, and it does not use the payment fields of its
   * `call`): a paid call may start it as soon as the payment is reserved for this request and
   * checked (verified by the facilitator in the x402 `authorization` flow; in the `upfront` flow its
   * EIP-712 signature recovered to the payer), while the payment settles on-chain. Its result is released only after settlement,
   * and discarded (nothing charged) when settlement is refused. The reservation makes one payment
   * start it at most once. Never set for provider capabilities (a call costs the provider).
   */
  readOnly?: boolean;
  /** Runs after payment with the parsed input; throws {@link CapabilityFailure} (refunded) on failure. Its result must match `output`. */
  run?(input: z.output<I>, deps: CapabilityDeps, call?: CapabilityCall): Promise<z.input<O>>;
}

/** A definition with `run`: schemas and price are present, `executable` is true. */
export interface ExecutableCapability<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> extends CapabilityDefinition<I, O> {
  executable: true;
  input: I;
  output: O;
  price: CapabilityPrice;
  run(input: z.output<I>, deps: CapabilityDeps, call?: CapabilityCall): Promise<z.input<O>>;
}

/** True when `d` runs through `POST /api/v1/execute` (it has `run`). */
export function isExecutable(d: CapabilityDefinition): d is ExecutableCapability {
  return d.executable && typeof d.run === 'function' && d.input !== null && d.output !== null && d.price !== null;
}

/**
 * The catalog fields every capability called as `POST {base_url}/api/v1/execute` with
 * `{capability_id, input}` and paid per call with x402 shares: `surface: 'REST'`, `auth: 'x402'`,
 * `method: 'POST'`, `endpoint: '{base_url}/api/v1/execute'`, `x402: 'accepted'`. Spread it into
 * {@link defineCapability} (docs, `built` and the price stay the definition's own).
 */
export const PAID_THROUGH_EXECUTE = {
  surface: 'REST',
  auth: 'x402',
  method: 'POST',
  endpoint: '{base_url}/api/v1/execute',
  x402: 'accepted',
} as const satisfies Pick<CapabilityDefinition, 'surface' | 'auth' | 'method' | 'endpoint' | 'x402'>;

/** What {@link defineCapability} takes: a definition without `executable`, which follows from `run`. */
export type DefineCapabilityParameters<I extends z.ZodType, O extends z.ZodType> = Omit<CapabilityDefinition<I, O>, 'executable'>;

/**
 * Defines one capability (docs/decisions.md "Capabilities: one definition"). `executable` is set exactly when
 * `run` is given; `built` stays explicit (`false` = PLANNED in the catalog).
 *
 * @returns The frozen definition: an {@link ExecutableCapability} when `run` is given.
 * @throws {InvalidCapabilityDefinitionError} when `run` is given without `input`, `output` or `price`,
 *   when `precondition` is given without `run`, or when the id is not `<product>.<name>` of its product.
 *
 * @example
 * const echo = defineCapability({
 *   id: 'intelligence.echo', product: 'intelligence', name: 'Echo', description: 'Returns its input.',
 *   price: { base_units: 1000n, unit: 'call' },             // 0.001 USDC per call
 *   input: z.object({ text: z.string() }), output: z.object({ text: z.string() }),
 *   ...PAID_THROUGH_EXECUTE, docs: null, built: true, example: { request: { capability_id: 'intelligence.echo', input: { text: 'hi' } }, response: null },
 *   run: async ({ text }) => ({ text }),
 * });
 */
export function defineCapability<I extends z.ZodType, O extends z.ZodType>(
  parameters: DefineCapabilityParameters<I, O> & Pick<ExecutableCapability<I, O>, 'run' | 'input' | 'output' | 'price'>,
): ExecutableCapability<I, O>;
export function defineCapability<I extends z.ZodType, O extends z.ZodType>(parameters: DefineCapabilityParameters<I, O>): CapabilityDefinition<I, O>;
export function defineCapability<I extends z.ZodType, O extends z.ZodType>(parameters: DefineCapabilityParameters<I, O>): CapabilityDefinition<I, O> {
  const { id } = parameters;
  if (!id.startsWith(`${parameters.product}.`)) throw new InvalidCapabilityDefinitionError(id, `the id must start with its product "${parameters.product}."`);
  if (parameters.run) {
    if (!parameters.input || !parameters.output) throw new InvalidCapabilityDefinitionError(id, 'an executable capability needs input and output schemas');
    if (!parameters.price) throw new InvalidCapabilityDefinitionError(id, 'an executable capability needs a price');
  } else if (parameters.precondition || parameters.ready) {
    throw new InvalidCapabilityDefinitionError(id, 'a precondition needs run');
  }
  if (parameters.price && parameters.price.base_units < 0n) throw new InvalidCapabilityDefinitionError(id, 'the price must not be negative');
  return Object.freeze({ ...parameters, executable: typeof parameters.run === 'function' });
}
