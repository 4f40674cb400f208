import { gatewayJobs } from '@acg/capabilities';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { SIGN_IN_WITH_X, wrapFetchWithSIWx } from '@x402/extensions/sign-in-with-x';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../useTestGateway.js';
import { asReadOnChain, bearerToken, challenge, officialPayload, paymentHeader, post } from '../x402.js';

/**
 * Attack (issue 36, item 1): a stranger reads a job's results. Anyone who rebuilds a job's settled
 * authorization from the chain and resends it with the job's body gets 409
 * `payment_already_used` naming the `job_id`; `GET /api/v1/jobs/{job_id}` then answered 200 with
 * no credentials (step inputs, results, execution ids, proofs). A job is now read like an
 * execution, by its payer only (the same owner check): its bearer token (Sign-In with Ethereum) or
 * a `SIGN-IN-WITH-X` proof; without credentials a 402 carrying the sign-in-with-x challenge;
 * another wallet gets 404, as for an unknown job. The same holds on `/trpc/jobs.get`. This file
 * failed before the fix (checked).
 */

const t = useTestGateway();
const body = gatewayJobs.example.request as { objective: string; budget_usdc: number };
let jobId: string;

beforeAll(async () => {
  const payer = t.stack.payment.buyers[0];
  const required = await challenge(`${t.url}/api/v1/jobs`, body);
  const payload = await officialPayload(payer, required);
  const created = await post(`${t.url}/api/v1/jobs`, body, { 'payment-signature': paymentHeader(payload) });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  jobId = created.body.job_id;
  // the stranger: the authorization as read from the chain, resent with the job's body
  const replayed = await post(`${t.url}/api/v1/jobs`, body, { 'payment-signature': paymentHeader(asReadOnChain(payload)) });
  expect(replayed.status).toBe(409);
  expect(replayed.body).toMatchObject({ reason: 'payment_already_used', job_id: jobId });
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${t.url}${path}`, { headers });

describe("a job's record is the payer's", () => {
  it('without credentials: 402 with a sign-in-with-x challenge for this URL, no job data (REST and /trpc)', async () => {
    for (const path of [`/api/v1/jobs/${jobId}`, `/trpc/jobs.get?input=${encodeURIComponent(JSON.stringify({ job_id: jobId }))}`]) {
      const res = await get(path);
      expect(res.status, path).toBe(402);
      const text = await res.text();
      expect(text, path).not.toContain('"steps"');
      expect(text, path).not.toContain(body.objective);
      const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
      expect(required.extensions?.[SIGN_IN_WITH_X], path).toBeDefined();
      expect(
        required.accepts.every((a) => a.amount === '0'),
        path,
      ).toBe(true);
    }
  });

  it("another wallet's token or proof: 404 as for an unknown job; an invalid token: 401", async () => {
    const stranger = t.stack.payment.buyers[1];
    const res = await get(`/api/v1/jobs/${jobId}`, { authorization: `Bearer ${await bearerToken(t.url, stranger)}` });
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain(body.objective);
    expect((await wrapFetchWithSIWx(fetch, stranger)(`${t.url}/api/v1/jobs/${jobId}`)).status).toBe(404);
    const trpc = await get(`/trpc/jobs.get?input=${encodeURIComponent(JSON.stringify({ job_id: jobId }))}`, {
      authorization: `Bearer ${await bearerToken(t.url, stranger)}`,
    });
    expect(trpc.status).toBe(404);
    expect((await get(`/api/v1/jobs/${jobId}`, { authorization: 'Bearer acg_not_a_token' })).status).toBe(401);
  });

  it('the payer reads it with its bearer token or by signing in with x', async () => {
    const payer = t.stack.payment.buyers[0];
    const res = await get(`/api/v1/jobs/${jobId}`, { authorization: `Bearer ${await bearerToken(t.url, payer)}` });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toMatchObject({ job_id: jobId, objective: body.objective });
    const signedIn = await wrapFetchWithSIWx(fetch, payer)(`${t.url}/api/v1/jobs/${jobId}`);
    expect(signedIn.status).toBe(200);
    expect(await signedIn.json()).toMatchObject({ job_id: jobId });
    expect(signedIn.headers.get('authentication-info')).toMatch(/access_token="acg_/);
  });
});
