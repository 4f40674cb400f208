import { CapabilityFailure, defineCapability, type CapabilityCall, type ExecutableCapability } from '@acg/capabilities';
import { ProviderCallResponse, type ProviderOffer } from '@acg/schemas';
import { verifyResultSignature } from '@acg/provider';
import { parseUnits, type Hex } from 'viem';
import { z } from 'zod';
import type { ProviderClient, ProviderCallOutcome } from './client.js';
import { compileJsonSchema, schemaIssues } from './jsonSchema.js';
import { offerCapabilityId, type ProviderRecord, type ProviderStore } from './store.js';
import type { TrustOutcomeKind } from './trust.js';
import type { TrustRecords } from './trustRecords.js';

/** What the provider ledger is told after a paid provider call succeeded (docs/decisions.md "Providers", money). */
export interface ProviderCredit {
  execution_id: string;
  provider_id: string;
  provider_address: `0x${string}`;
  capability_id: string;
  payer: `0x${string}`;
  /** the price paid: USDC base units (6 decimals) */
  price: bigint;
  payment_tx_hash: `0x${string}`;
}

/** Where a provider's share goes: the provider ledger's `credit` (idempotent per execution id). */
export interface ProviderEarnings {
  credit(e: ProviderCredit): Promise<unknown>;
}

/** What provider capabilities use at run time: the HTTP client, the store (stats) and the ledger. */
export interface ProviderRuntime {
  client: ProviderClient;
  store: Pick<ProviderStore, 'countCall'>;
  earnings?: ProviderEarnings;
  /** Where each execution's outcome and latency are recorded for its trust score (packages/providers README "Trust scores"). */
  trust?: Pick<TrustRecords, 'record'>;
}

/** A price in decimal USDC (`"0.002"`) as base units (2000n). */
export const usdcBaseUnits = (price: string): bigint => parseUnits(price, 6);

const title = (name: string) => name.replaceAll('_', ' ').replace(/^./, (c) => c.toUpperCase());

/** Why a provider's answer failed the call, as the buyer sees it (never the provider's text). */
function failureOf(outcome: Extract<ProviderCallOutcome, { ok: false }>): CapabilityFailure {
  if (outcome.reason === 'timeout') return new CapabilityFailure('provider_timeout', 'The provider did not answer in time; the payment is refunded.', 504);
  if (outcome.reason.startsWith('http_'))
    return new CapabilityFailure('provider_error', `The provider answered HTTP ${outcome.status}; the payment is refunded.`, 502);
  if (outcome.reason === 'not_json' || outcome.reason === 'response_too_large')
    return new CapabilityFailure('provider_invalid_output', 'The provider answered something other than its result; the payment is refunded.', 502);
  return new CapabilityFailure('provider_unavailable', 'The provider could not be reached; the payment is refunded.', 502);
}

/**
 * The capability a provider's offer becomes (docs/decisions.md "Providers"): listed in the catalog with
 * `provider` = the provider's name, paid per call with x402 through `POST /api/v1/execute` and job
 * steps like a built-in. Its `input` enforces the offer's `input_schema` with Ajv (a 400 before
 * payment), and its published schemas are the provider's own. `run` sends the signed call; a
 * non-2xx, a timeout (`timeout_ms`), a non-JSON body or a result invalid against `output_schema`
 * throws {@link CapabilityFailure} (the execution is FAILED and refunded; the provider earns
 * nothing). A valid result hands the credit of the provider's share (`runtime.earnings`) to the
 * Executor, which runs it only after everything that can still fail (`CapabilityCall.attach`). Every call counts in the capability's stats.
 */
export function providerCapability(record: ProviderRecord, offer: ProviderOffer, runtime: ProviderRuntime): ExecutableCapability {
  const id = offerCapabilityId(offer);
  const validateInput = compileJsonSchema(offer.input_schema, 'input_schema');
  const validateOutput = compileJsonSchema(offer.output_schema, 'output_schema');
  const price = usdcBaseUnits(offer.price_usdc);
  const input = z.unknown().superRefine((value, ctx) => {
    if (validateInput(value)) return;
    for (const issue of schemaIssues(validateInput.errors)) ctx.addIssue({ code: 'custom', path: issue.path, message: `${issue.message} (${issue.code})` });
  });
  return defineCapability({
    id: id as `${string}.${string}`,
    product: offer.product,
    name: title(offer.name),
    description: offer.description,
    surface: 'REST',
    auth: 'x402',
    method: 'POST',
    endpoint: '{base_url}/api/v1/execute',
    docs: null,
    provider: record.name,
    built: true,
    x402: 'accepted',
    price: { base_units: price, unit: 'call' },
    input,
    output: z.record(z.string(), z.unknown()),
    inputJsonSchema: offer.input_schema,
    outputJsonSchema: offer.output_schema,
    accepts_objective: offer.accepts_objective,
    example: { request: { capability_id: id, input: offer.example_request }, response: null },
    notes: `Run by the third-party provider ${record.name} (${record.address}); the gateway routes, takes payment and refunds failures.`,
    async run(value: unknown, _deps, call?: CapabilityCall) {
      const executionId = call?.executionId ?? 'exe_unknown';
      const started = performance.now();
      // every paid call's outcome is evidence for the offer's trust score (never failing the call)
      const evidence = async (ok: boolean, kind: TrustOutcomeKind) => {
        await runtime.store.countCall(id, ok).catch(() => undefined);
        await runtime.trust
          ?.record(
            { provider_id: record.provider_id, listed_at: record.created_at, capability_id: id, timeout_ms: offer.timeout_ms },
            { source: 'execution', outcome: kind, latency_ms: performance.now() - started },
          )
          .catch(() => undefined);
      };
      const outcome = await runtime.client.call(
        record.endpoint,
        record.secret,
        { capability_id: id, execution_id: executionId, input: value },
        { timeoutMs: offer.timeout_ms, messageId: executionId },
      );
      if (!outcome.ok) {
        await evidence(
          false,
          outcome.reason === 'timeout' ? 'timeout' : outcome.reason === 'not_json' || outcome.reason === 'response_too_large' ? 'invalid_output' : 'failed',
        );
        throw failureOf(outcome);
      }
      const parsed = ProviderCallResponse.safeParse(outcome.body);
      const result = parsed.success ? parsed.data.result : undefined;
      if (!parsed.success || result === null || typeof result !== 'object' || Array.isArray(result) || !validateOutput(result)) {
        await evidence(false, 'invalid_output');
        throw new CapabilityFailure('provider_invalid_output', "The provider's result does not match its output_schema; the payment is refunded.", 502);
      }
      // the provider's own signature over this result, by its registered address: evidence for disputes
      const signature = parsed.data.signature as Hex | undefined;
      if (!signature || !(await verifyResultSignature({ address: record.address, executionId, result, signature }))) {
        await evidence(false, 'invalid_signature');
        throw new CapabilityFailure(
          'provider_unsigned_result',
          "The provider's result is not signed by its registered address (EIP-191); the payment is refunded.",
          502,
        );
      }
      await evidence(true, 'succeeded');
      const earnings = runtime.earnings;
      const credit =
        call && earnings && call.amount !== undefined
          ? () =>
              earnings.credit({
                execution_id: executionId,
                provider_id: record.provider_id,
                provider_address: record.address,
                capability_id: id,
                payer: call.payer as `0x${string}`,
                price: BigInt(call.amount!),
                payment_tx_hash: call.paymentTxHash as `0x${string}`,
              })
          : undefined;
      // the share is credited by the Executor once the call's outcome is decided (see CapabilityCall.attach)
      if (call?.attach) call.attach({ provider_signature: signature, ...(credit ? { credit } : {}) });
      else await credit?.();
      return result as Record<string, unknown>;
    },
  });
}
