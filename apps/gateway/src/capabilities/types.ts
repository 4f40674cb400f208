import type { PublicClient } from 'viem';
import type { z } from 'zod';
import type { ChainName } from '../config.js';

/** What a capability handler may use: chain clients by SPEC chain name. */
export interface CapabilityDeps {
  /** A viem public client for `chain`, or undefined when that chain is not configured. */
  chainClient(chain: ChainName): PublicClient | undefined;
}

/**
 * One capability served in-process (STYLE: one file per capability handler).
 * `precondition` runs before payment: a string return is a 422 reason, nothing is charged.
 * `run` runs after settlement; it throws CapabilityFailure (refunded) on failure.
 */
export interface CapabilityHandler<I extends z.ZodType, O extends z.ZodType> {
  id: string;
  input: I;
  output: O;
  precondition?(input: z.output<I>, deps: CapabilityDeps): string | undefined;
  run(input: z.output<I>, deps: CapabilityDeps): Promise<z.input<O>>;
}

/**
 * A capability failed after payment. `code` is snake_case and stable, `message` is safe to show
 * (never upstream text), `status` is the HTTP status to answer (502/503/504).
 */
export class CapabilityFailure extends Error {
  override name = 'CapabilityFailure';
  constructor(
    readonly code: string,
    message: string,
    readonly status = 502,
    override readonly cause?: unknown,
  ) {
    super(message);
  }
}
