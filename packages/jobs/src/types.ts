import type { ExecutionError, JobPayment, JobStatus, JobStepStatus } from '@acg/schemas';

export type { JobStatus };

/** A job step as stored (docs/decisions.md "Jobs"); amounts in integer USDC base units as strings internally. */
export interface StoredStep {
  capability_id: string;
  input: Record<string, unknown>;
  /** integer string, USDC base units (the capability's price when planned) */
  price: string;
  execution_id: string | null;
  status: JobStepStatus;
  /** integer string, USDC base units actually spent on this step (0 unless it succeeded) */
  cost: string;
  attempts: number;
  started_at: string | null;
  finished_at: string | null;
  result: Record<string, unknown> | null;
  error: ExecutionError | null;
  /** JWS proof of a succeeded step's result, when the executor signs proofs */
  proof?: string;
}

/** The stored job (Redis JSON). Amounts are integer strings of USDC base units (6 decimals). */
export interface StoredJob {
  job_id: string;
  objective: string;
  capabilities: string[];
  /** integer string, USDC base units */
  budget: string;
  /** integer string, USDC base units */
  spent: string;
  status: JobStatus;
  steps: StoredStep[];
  result: Record<string, unknown> | null;
  error: ExecutionError | null;
  /** the wallet that paid the budget (x402 payer); the only one who may cancel */
  payer: `0x${string}`;
  payment: StoredJobPayment;
  created_at: string;
  updated_at: string;
  /** integer string, USDC base units, set when the job ends with budget left */
  refund_amount: string | null;
}

/**
 * The budget payment as stored: the public {@link JobPayment} (`scheme`, `amount`, `ceiling`,
 * `status`, `tx_hash`) plus, for `upto`, what the runner needs to have it settled when the job ends
 * (never shown): `authorization`, the paywall's reservation key of the payment, and `deadline`, the
 * Permit2 deadline (unix seconds) before which the job must end and be settled.
 */
export type StoredJobPayment = JobPayment & { authorization?: string; deadline?: number };

/** What a job step needs to know about a capability (resolved by the host, e.g. the gateway). */
export interface StepCapability {
  /** integer base units */
  price: bigint;
  /** validates and normalizes the step input (zod safeParse-like) */
  parseInput(input: unknown): { success: true; data: unknown } | { success: false; issues: { path: (string | number)[]; message: string }[] };
  /** a reason the step cannot run here (e.g. a chain not configured), or undefined */
  precondition?(input: unknown): string | undefined;
  /** true when the capability takes `{objective}` as input (a job without `steps` runs it with the job's objective) */
  acceptsObjective?: boolean;
}

/** Runs one step's capability once, paid from the job's budget (the gateway's Executor). */
export interface StepExecutor {
  run(
    executionId: string,
    capabilityId: string,
    input: unknown,
    charge: { tx_hash: string; amount: string; job_id: string; payer: string },
  ): Promise<{
    status: 'SUCCEEDED' | 'FAILED';
    result: Record<string, unknown> | null;
    error?: { code: string; message: string };
    transient: boolean;
    proof?: string;
  }>;
  /** A stored execution by id (to adopt a step that ran before a crash), or undefined. */
  find(
    executionId: string,
  ): Promise<{ status: 'SUCCEEDED' | 'FAILED'; result: Record<string, unknown> | null; error?: { code: string; message: string }; proof?: string } | undefined>;
}
