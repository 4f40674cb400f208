import { JobRecord } from '@acg/schemas';
import { describe, expect, it } from 'vitest';
import { jobView, type StoredJob } from '../src/index.js';

const PAYER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const TX = `0x${'ab'.repeat(32)}` as const;

function storedJob(overrides: Partial<StoredJob> = {}): StoredJob {
  return {
    job_id: 'job_01JD5X0Q6Z8R3M2N4P5Q6R7S8T',
    objective: 'balances of one wallet',
    capabilities: ['intelligence.wallet_balances'],
    budget: '1500000',
    spent: '1000',
    status: 'succeeded',
    steps: [
      {
        capability_id: 'intelligence.wallet_balances',
        input: { address: PAYER },
        price: '1000',
        execution_id: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8V',
        status: 'succeeded',
        cost: '1000',
        attempts: 1,
        started_at: '2025-01-01T00:00:00.000Z',
        finished_at: '2025-01-01T00:00:01.000Z',
        result: { native: '0' },
        error: null,
      },
      {
        capability_id: 'intelligence.wallet_balances',
        input: { address: PAYER, chain: 'ethereum' },
        price: '1000',
        execution_id: null,
        status: 'failed',
        cost: '0',
        attempts: 2,
        started_at: '2025-01-01T00:00:01.000Z',
        finished_at: '2025-01-01T00:00:02.000Z',
        result: null,
        error: { code: 'upstream_unavailable', message: 'The chain did not answer.' },
      },
    ],
    result: { steps: 2 },
    error: null,
    payer: PAYER,
    payment: { tx_hash: TX, amount: '1500000' },
    created_at: '2025-01-01T00:00:00.000Z',
    updated_at: '2025-01-01T00:00:02.000Z',
    refund_amount: '1499000',
    ...overrides,
  };
}

describe('jobView', () => {
  it('is a JobRecord of @acg/schemas (what GET /api/v1/jobs/{id} declares), refund sent', () => {
    const view = jobView(storedJob(), { status: 'sent', amount: '1499000', payer: PAYER, tx_hash: TX }, false);
    expect(JobRecord.parse(view)).toEqual(view);
    expect(view.refund).toEqual({ status: 'sent', amount: '1499000', tx_hash: TX });
    expect(view.budget_usdc).toBe(1.5);
    expect(view.steps[0].cost_usdc).toBe(0.001);
  });

  it('is a JobRecord while queued, with no refund and a cancel requested', () => {
    const view = jobView(storedJob({ status: 'queued', spent: '0', steps: [], result: null, refund_amount: null }), undefined, true);
    expect(JobRecord.parse(view)).toEqual(view);
    expect(view.refund).toBeNull();
    expect(view.cancel_requested).toBe(true);
  });

  it("shows the budget payment's settlement: settled, then final; unpaid withholds every result and proof", () => {
    const moved = `0x${'77'.repeat(32)}` as const;
    const settled = jobView(storedJob(), undefined, false, { status: 'settled', tx_hash: TX });
    expect(JobRecord.parse(settled)).toEqual(settled);
    expect(settled.payment).toEqual({ tx_hash: TX, amount: '1500000', status: 'settled' });
    // resubmitted after a reorg: the transaction on chain now, final
    const final = jobView(storedJob(), undefined, false, { status: 'final', tx_hash: moved });
    expect(final.payment).toEqual({ tx_hash: moved, amount: '1500000', status: 'final' });
    expect(final.result).toEqual({ steps: 2 });
    const unpaid = jobView(storedJob({ steps: [{ ...storedJob().steps[0], proof: 'jws' }] }), undefined, false, { status: 'unpaid', tx_hash: TX });
    expect(JobRecord.parse(unpaid)).toEqual(unpaid);
    expect(unpaid.payment.status).toBe('unpaid');
    expect(unpaid.result).toBeNull();
    expect(unpaid.steps[0]).toMatchObject({ result: null });
    expect(unpaid.steps[0].proof).toBeUndefined();
    // without tracking (a job paid before it), the record is as stored
    expect(jobView(storedJob(), undefined, false).payment).toEqual({ tx_hash: TX, amount: '1500000' });
  });
});
