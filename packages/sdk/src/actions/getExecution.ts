import type { GatewayContext } from '../context.js';
import type { GatewayError, GatewayRequestError } from '../errors.js';
import type { ExecutionRecord } from '../types.js';
import { bearerJson } from './internal.js';

/** Parameters of {@link getExecution}. */
export interface GetExecutionParameters {
  /** `exe_` + ULID, from {@link execute}. */
  executionId: string;
  /** Bearer token (Sign-In with Ethereum) of the address that paid: only the payer may read an execution. */
  accessToken: string | undefined;
}

/** A stored execution with its refund state (`payment.amount`, `refund.amount`: integer USDC base units). */
export type GetExecutionReturnType<TResult = Record<string, unknown>> = ExecutionRecord<TResult>;

/** Errors of {@link getExecution}. */
export type GetExecutionErrorType = GatewayError | GatewayRequestError;

/**
 * `GET /api/v1/executions/{id}`: a stored execution (SUCCEEDED with its `proof`, or FAILED with
 * `error` and `refund`), readable by the payer only (bearer token of the paying address). Free.
 *
 * @throws {GatewayError} 401 no or bad token, 404 unknown id or paid by another address. {GatewayRequestError} unreachable.
 *
 * @example
 * const record = await getExecution(ctx, { executionId: exe.execution_id, accessToken })
 */
export async function getExecution<TResult = Record<string, unknown>>(
  ctx: GatewayContext,
  { executionId, accessToken }: GetExecutionParameters,
): Promise<GetExecutionReturnType<TResult>> {
  return bearerJson<ExecutionRecord<TResult>>(ctx, accessToken, 'GET', `/api/v1/executions/${encodeURIComponent(executionId)}`);
}
