import type { GatewayContext } from '../context.js';
import type { GatewayError, GatewayRequestError } from '../errors.js';
import { jsonOf, request } from '../http.js';
import type { ExecutionRecord } from '../types.js';
import { throwForStatus } from './internal.js';

/** Parameters of {@link getExecution}. */
export interface GetExecutionParameters {
  /** `exe_` + ULID, from {@link execute}. */
  executionId: string;
}

/** A stored execution with its refund state (`payment.amount`, `refund.amount`: integer USDC base units). */
export type GetExecutionReturnType<TResult = Record<string, unknown>> = ExecutionRecord<TResult>;

/** Errors of {@link getExecution}. */
export type GetExecutionErrorType = GatewayError | GatewayRequestError;

/**
 * `GET /api/v1/executions/{id}`: a stored execution (SUCCEEDED, or FAILED with `error` and `refund`). Free.
 *
 * @throws {GatewayError} 404 unknown id. {GatewayRequestError} unreachable.
 *
 * @example
 * const record = await getExecution(ctx, { executionId: exe.execution_id })
 */
export async function getExecution<TResult = Record<string, unknown>>(
  ctx: GatewayContext,
  { executionId }: GetExecutionParameters,
): Promise<GetExecutionReturnType<TResult>> {
  const path = `/api/v1/executions/${encodeURIComponent(executionId)}`;
  const r = await request(ctx, path);
  if (!r.response.ok) throwForStatus(r);
  return jsonOf<ExecutionRecord<TResult>>(ctx, path, r);
}
