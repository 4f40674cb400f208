import { ExecuteRequest, ExecutionResponse, type ProblemDetails } from '@acg/schemas';
import type { z } from 'zod';
import { defineCapability, PAID_THROUGH_EXECUTE } from '../define.js';
import { WALLET_BALANCES_ID, walletBalancesRequest, walletBalancesResponse } from './intelligence_wallet_balances.js';

/** Body of `POST /api/v1/execute`: `{capability_id, input}` (docs/spec-notes.md 2.7). */
export type ExecuteParameters = z.input<typeof ExecuteRequest>;
/** `{execution_id, status, result, payment: {tx_hash, amount}}`; `amount` in USDC base units (integer string). */
export type ExecuteReturnType = z.infer<typeof ExecutionResponse>;
/** 400 invalid input, 404 unknown id, 409 payment reused, 422 not executable, 502/503 failed after payment (refunded); 402 is the x402 challenge. */
export type ExecuteErrorType = ProblemDetails;

/**
 * `gateway.execute`: runs a named capability for the caller, paid per call with x402 (USDC on
 * Base). The price is that of the capability named by `capability_id` (USDC base units, 6
 * decimals), so this entry has none of its own. Not executable itself.
 *
 * @example
 * // POST {base_url}/api/v1/execute, unpaid → 402 with PAYMENT-REQUIRED; retry with PAYMENT-SIGNATURE
 * { "capability_id": "intelligence.wallet_balances", "input": { "address": "0x3C44…93BC", "chain": "base" } }
 */
export const gatewayExecute = defineCapability({
  id: 'gateway.execute',
  product: 'gateway',
  name: 'Execute a capability',
  description:
    'Runs a named capability for the caller and charges its price per call through x402 in USDC on Base. ' +
    'Returns the result together with the on-chain payment receipt.',
  ...PAID_THROUGH_EXECUTE,
  docs: '{base_url}/openapi.json',
  built: true,
  price: null,
  input: ExecuteRequest,
  output: ExecutionResponse,
  example: { request: walletBalancesRequest, response: walletBalancesResponse },
  related_capabilities: [WALLET_BALANCES_ID],
  notes: 'The price is that of the capability named by capability_id; a request without payment gets 402 with the x402 challenge.',
});
