import { MAX_JOB_STEP_INPUT_BYTES } from '@acg/schemas';
import type { StepCapability, StoredStep } from './types.js';
import { usdcToBaseUnits } from './units.js';

/** A job request (docs/spec-notes.md 2.8 + docs/decisions.md "Jobs"), already shape-checked by zod. */
export interface JobRequestInput {
  objective: string;
  budget_usdc: number;
  capabilities: string[];
  steps?: { capability_id: string; input: Record<string, unknown> }[];
}

/**
 * Why a plan cannot run: HTTP status (400 bad input, 413 a step's input over its size limit, 422 not
 * executable / budget), sentence, issues, and for a limit its name and maximum (`limit`, `max`:
 * extension members of the problem).
 */
export class PlanError extends Error {
  override name = 'PlanError';
  constructor(
    readonly status: 400 | 413 | 422,
    message: string,
    readonly issues: { path: (string | number)[]; message: string }[] = [],
    readonly limit?: { limit: string; max: number },
  ) {
    super(message);
  }
}

/**
 * A step as planned, before it runs: status `pending`, nothing spent, no attempt, execution or
 * result yet; `price` is the capability's price in integer USDC base units.
 */
export function pendingStep(capabilityId: string, input: Record<string, unknown>, price: bigint): StoredStep {
  return {
    capability_id: capabilityId,
    input,
    price: price.toString(),
    execution_id: null,
    status: 'pending',
    cost: '0',
    attempts: 0,
    started_at: null,
    finished_at: null,
    result: null,
    error: null,
  };
}

/** Largest budget accepted, USDC base units (10,000 USDC). */
export const MAX_BUDGET = 10_000_000_000n;

/**
 * Validates a job request before any payment and returns its steps (docs/decisions.md "Jobs"):
 * - every listed capability must be executable here (422 otherwise);
 * - without `steps`, every listed capability must accept an objective (`accepts_objective`; 422
 *   naming the others): each then runs once with input `{objective}`;
 * - `steps` (or the objective steps) must each be in
 *   `capabilities` and have an input valid for that capability (400 with the path, e.g.
 *   `steps.1.input.address`) and a met precondition (422);
 * - the budget (≤ 6 decimals, ≤ 10,000 USDC) must cover at least the cheapest step (422);
 * - each step's `input` is at most `MAX_JOB_STEP_INPUT_BYTES` of JSON (413, `limit:
 *   "step_input_bytes"`); the counts of capabilities and steps are bounded by the wire schema.
 * Linear in the request: each distinct capability is resolved once.
 * Throws PlanError; returns the planned steps and the budget in base units.
 */
export function planJob(req: JobRequestInput, resolve: (capabilityId: string) => StepCapability | undefined): { steps: StoredStep[]; budget: bigint } {
  let budget: bigint;
  try {
    budget = usdcToBaseUnits(req.budget_usdc);
  } catch {
    throw new PlanError(400, 'budget_usdc has more than 6 decimals.', [{ path: ['budget_usdc'], message: 'at most 6 decimals' }]);
  }
  if (budget <= 0n || budget > MAX_BUDGET) {
    throw new PlanError(400, 'budget_usdc must be greater than 0 and at most 10000.', [{ path: ['budget_usdc'], message: 'out of range' }]);
  }
  // each step input at most MAX_JOB_STEP_INPUT_BYTES of JSON (413 naming the limit)
  req.steps?.forEach((step, index) => {
    const bytes = Buffer.byteLength(JSON.stringify(step.input), 'utf8');
    if (bytes > MAX_JOB_STEP_INPUT_BYTES) {
      throw new PlanError(
        413,
        `steps.${index}.input is ${bytes} bytes of JSON; a step input may have at most ${MAX_JOB_STEP_INPUT_BYTES}.`,
        [{ path: ['steps', index, 'input'], message: `at most ${MAX_JOB_STEP_INPUT_BYTES} bytes` }],
        { limit: 'step_input_bytes', max: MAX_JOB_STEP_INPUT_BYTES },
      );
    }
  });
  // every distinct capability resolved once; later lookups are O(1) (linear in the request size)
  const resolved = new Map<string, StepCapability | undefined>();
  for (const id of req.capabilities) if (!resolved.has(id)) resolved.set(id, resolve(id));
  const lookup = (id: string) => resolved.get(id);
  const unknown = req.capabilities
    .map((id, i) => ({ id, i }))
    .filter(({ id }) => !lookup(id))
    .map(({ id, i }) => ({ path: ['capabilities', i], message: `${id} is not executable through jobs` }));
  if (unknown.length > 0) throw new PlanError(422, 'Some capabilities are unknown or not executable.', unknown);

  if (!req.steps) {
    const refusing = req.capabilities
      .map((id, i) => ({ id, i }))
      .filter(({ id }) => !lookup(id)!.acceptsObjective)
      .map(({ id, i }) => ({ path: ['capabilities', i], message: `${id} does not accept an objective: give steps with its input` }));
    if (refusing.length > 0) {
      throw new PlanError(
        422,
        `Without steps, every listed capability must accept an objective; ${refusing.map((r) => r.message.split(' ')[0]).join(', ')} do not.`,
        refusing,
      );
    }
  }
  const planned = req.steps ?? req.capabilities.map((capability_id) => ({ capability_id, input: { objective: req.objective } }));
  const issues: { path: (string | number)[]; message: string }[] = [];
  const steps: StoredStep[] = [];
  planned.forEach((step, index) => {
    if (!resolved.has(step.capability_id)) {
      issues.push({ path: ['steps', index, 'capability_id'], message: `${step.capability_id} is not listed in capabilities` });
      return;
    }
    const cap = lookup(step.capability_id)!;
    const parsed = cap.parseInput(step.input);
    if (!parsed.success) {
      const base = req.steps ? ['steps', index, 'input'] : ['steps'];
      for (const issue of parsed.issues)
        issues.push({
          path: [...base, ...issue.path],
          message: req.steps ? issue.message : `${step.capability_id} needs explicit steps with input (${issue.message})`,
        });
      return;
    }
    const unmet = cap.precondition?.(parsed.data);
    if (unmet) {
      issues.push({ path: ['steps', index], message: unmet });
      return;
    }
    steps.push(pendingStep(step.capability_id, step.input, cap.price));
  });
  if (issues.length > 0) throw new PlanError(req.steps ? 400 : 422, 'Some steps cannot run.', issues);
  const cheapest = steps.reduce((m, s) => (BigInt(s.price) < m ? BigInt(s.price) : m), BigInt(steps[0].price));
  if (budget < cheapest) {
    throw new PlanError(422, `budget_usdc is below the cheapest step (${Number(cheapest) / 1e6} USDC).`, [
      { path: ['budget_usdc'], message: 'below the cheapest step' },
    ]);
  }
  return { steps, budget };
}
