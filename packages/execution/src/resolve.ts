import { isExecutable, type CapabilityDefinition, type CapabilityDeps, type ExecutableCapability } from '@acg/capabilities';
import type { ProblemIssue } from '@acg/schemas';

/** Why a capability cannot run with this input: the stage that refused it. */
export type CapabilityResolutionErrorCode = 'unknown_capability' | 'not_executable' | 'invalid_input' | 'precondition_unmet';

/**
 * A request names a capability that cannot run here, before any payment (docs/spec-notes.md 2.7; docs/decisions.md
 * "Errors"): `unknown_capability` 404, `not_executable` 422, `invalid_input` 400 (with each zod
 * issue's `path` inside the input, and `message`, `code`), `precondition_unmet` 422 (e.g. a chain
 * not configured). `shortMessage` is safe to show.
 */
export class CapabilityResolutionError extends Error {
  override name = 'CapabilityResolutionError';
  constructor(
    readonly code: CapabilityResolutionErrorCode,
    readonly status: 400 | 404 | 422,
    readonly shortMessage: string,
    readonly issues?: ProblemIssue[],
  ) {
    super(shortMessage);
  }
}

/** An executable capability with its input parsed once (defaults applied) and its price in USDC base units. */
export interface ResolvedCapability {
  definition: ExecutableCapability;
  /** The input after the definition's zod `input` schema (z.output). */
  input: unknown;
  /** USDC base units (6 decimals) per call. */
  price: bigint;
  /** The input as the caller sent it (before defaults): what an execution proof hashes. */
  rawInput: unknown;
}

/** {@link resolveCapability}'s answer: the resolved capability, or why not. */
export type Resolution = ({ ok: true } & ResolvedCapability) | { ok: false; error: CapabilityResolutionError };

/** The executable definition with this id, or a 404 (`unknown_capability`) / 422 (`not_executable`) error. */
export function executableDefinition(definitions: readonly CapabilityDefinition[], id: string): ExecutableCapability | CapabilityResolutionError {
  const definition = definitions.find((d) => d.id === id);
  if (!definition) return new CapabilityResolutionError('unknown_capability', 404, `Unknown capability "${id}". See GET /registry for the list.`);
  if (!isExecutable(definition))
    return new CapabilityResolutionError('not_executable', 422, `The capability "${id}" cannot be executed through /api/v1/execute.`);
  return definition;
}

/** `rawInput` parsed by the definition's input schema, or a 400 (`invalid_input`) error listing the zod issues (paths inside the input). */
export function parseCapabilityInput(
  definition: ExecutableCapability,
  rawInput: unknown,
): { ok: true; input: unknown } | { ok: false; error: CapabilityResolutionError } {
  const parsed = definition.input.safeParse(rawInput);
  if (parsed.success) return { ok: true, input: parsed.data };
  const issues = parsed.error.issues.map((i) => ({ path: i.path.map((p) => (typeof p === 'symbol' ? String(p) : p)), message: i.message, code: i.code }));
  return { ok: false, error: new CapabilityResolutionError('invalid_input', 400, `The input does not match the input_schema of "${definition.id}".`, issues) };
}

/** The definition's precondition on parsed input: a 422 (`precondition_unmet`) error, or undefined when it may run. */
export function checkPrecondition(definition: ExecutableCapability, input: unknown, deps: CapabilityDeps): CapabilityResolutionError | undefined {
  const unmet = definition.precondition?.(input, deps);
  return unmet ? new CapabilityResolutionError('precondition_unmet', 422, unmet) : undefined;
}

/**
 * Resolves `capabilityId` among `definitions` and parses `rawInput` once, before any payment:
 * unknown id → 404, listed but not executable → 422, input not matching the input schema → 400
 * with the issues, precondition unmet → 422. Shared by `POST /api/v1/execute`, job plans and job
 * steps, so every path resolves the same way. Never throws for a bad request.
 *
 * @example
 * const r = resolveCapability(BUILTIN_CAPABILITIES, 'intelligence.wallet_balances', { address }, deps);
 * if (r.ok) await executor.run(executionId, r, charge); // r.price = 1000n (0.001 USDC)
 * else r.error.status; // 400 | 404 | 422
 */
export function resolveCapability(definitions: readonly CapabilityDefinition[], capabilityId: string, rawInput: unknown, deps: CapabilityDeps): Resolution {
  const definition = executableDefinition(definitions, capabilityId);
  if (definition instanceof CapabilityResolutionError) return { ok: false, error: definition };
  const parsed = parseCapabilityInput(definition, rawInput);
  if (!parsed.ok) return parsed;
  const unmet = checkPrecondition(definition, parsed.input, deps);
  if (unmet) return { ok: false, error: unmet };
  return { ok: true, definition, input: parsed.input, price: definition.price.base_units, rawInput };
}
