import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import type { PublicClient } from 'viem';
import type { z } from 'zod';
import type { ChainName } from '../config.js';

/** What a capability handler may use: chain clients by SPEC chain name, and the deployment's Redis. */
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
  run(input: z.output<I>, deps: CapabilityDeps, call?: CapabilityCall): Promise<z.input<O>>;
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
