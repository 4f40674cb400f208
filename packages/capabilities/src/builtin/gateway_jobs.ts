import { JobCreated, JobRequest, type ProblemDetails } from '@acg/schemas';
import type { z } from 'zod';
import { defineCapability } from '../define.js';
import { EXAMPLE_ADDRESS } from './examples.js';
import { WALLET_BALANCES_ID } from './intelligence_wallet_balances.js';

/** Body of `POST /api/v1/jobs`: `{objective, budget_usdc (USDC, ≤ 6 decimals), capabilities, steps?}`. */
export type JobsParameters = z.input<typeof JobRequest>;
/** 202 `{job_id, status: "queued", poll_url}`. */
export type JobsReturnType = z.infer<typeof JobCreated>;
/** 400 bad plan, 402 x402 challenge for `budget_usdc`, 409 payment reused, 422 plan cannot run. */
export type JobsErrorType = ProblemDetails;

/**
 * `gateway.jobs`: a long-running objective run step by step by the workers, paid by x402 for its
 * `budget_usdc` (so no fixed price): with `exact` the whole budget, the unspent part refunded on-chain
 * when it ends; with `upto` the budget is authorized and only what the steps spent is settled when it
 * ends (docs/decisions.md "Payment schemes").
 *
 * @example
 * // POST {base_url}/api/v1/jobs, then the payer polls GET {base_url}/api/v1/jobs/{job_id} (bearer token or sign-in-with-x)
 * { "objective": "Read balances", "budget_usdc": 0.01, "capabilities": ["intelligence.wallet_balances"], "steps": [...] }
 */
export const gatewayJobs = defineCapability({
  id: 'gateway.jobs',
  product: 'gateway',
  name: 'Asynchronous jobs',
  description:
    'Runs a long-running objective as a job with a USDC budget, polled until it ends; the unspent budget is refunded (x402 `exact`), or only what was spent is settled (x402 `upto`).',
  surface: 'REST',
  auth: 'x402',
  method: 'POST',
  endpoint: '{base_url}/api/v1/jobs',
  docs: '{base_url}/openapi.json',
  built: true,
  x402: 'accepted',
  price: null,
  input: JobRequest,
  output: JobCreated,
  example: {
    request: {
      objective: 'Read the native and USDC balances of a wallet on Base',
      budget_usdc: 0.01,
      capabilities: [WALLET_BALANCES_ID],
      steps: [{ capability_id: WALLET_BALANCES_ID, input: { address: EXAMPLE_ADDRESS, chain: 'base' } }],
    },
    // 202 Accepted
    response: {
      job_id: 'job_01JD5X0Q6Z8R3M2N4P5Q6R7S8V',
      status: 'queued',
      poll_url: 'https://gateway.example.com/api/v1/jobs/job_01JD5X0Q6Z8R3M2N4P5Q6R7S8V',
    },
  },
  related_capabilities: ['gateway.execute'],
  notes:
    'Paid by x402 for budget_usdc; the payer polls GET {base_url}/api/v1/jobs/{job_id}, signed in with its bearer token or sign-in-with-x (anyone else: 402 without credentials, 404 with).',
});
