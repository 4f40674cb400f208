import type { StoredJob, StoredStep } from '@acg/jobs';
import { describe, expect, it } from 'vitest';
import { jobProgress, jobTask, taskStatus } from '../src/mcp/jobTasks.js';

/** A job's MCP task status and progress (apps/gateway docs/mcp-tasks.md "Following a task"). */

const step = (status: StoredStep['status'], cost = '0'): StoredStep => ({
  capability_id: 'intelligence.wallet_balances',
  input: {},
  price: '1000',
  execution_id: null,
  status,
  cost,
  attempts: 0,
  started_at: null,
  finished_at: null,
  result: null,
  error: null,
});

const job = (status: StoredJob['status'], steps: StoredStep[], spent: string): StoredJob => ({
  job_id: 'job_01JD5X0Q6Z8R3M2N4P5Q6R7S8V',
  objective: 'o',
  capabilities: ['intelligence.wallet_balances'],
  budget: '10000',
  spent,
  status,
  steps,
  result: null,
  error: null,
  payer: '0x0000000000000000000000000000000000000001',
  payment: { tx_hash: `0x${'1'.repeat(64)}`, amount: '10000' },
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:01.000Z',
  refund_amount: null,
});

describe('job task status', () => {
  it('maps each job status to what actually happened, whether or not a cancel was requested', () => {
    expect(taskStatus({ status: 'queued' })).toBe('working');
    expect(taskStatus({ status: 'running' })).toBe('working');
    expect(taskStatus({ status: 'succeeded' })).toBe('completed');
    expect(taskStatus({ status: 'failed' })).toBe('failed');
    expect(taskStatus({ status: 'budget_exhausted' })).toBe('failed');
    expect(taskStatus({ status: 'cancelled' })).toBe('cancelled');
    // a cancel requested while a step runs: still working until the job stops before its next step
    const cancelling = jobTask(job('running', [step('succeeded', '1000'), step('running'), step('pending')], '1000'), 'x', true);
    expect(cancelling.status).toBe('working');
    expect(cancelling.statusMessage).toContain('cancel requested');
    // a cancel that came too late: the job succeeded and the task says so
    const late = jobTask(job('succeeded', [step('succeeded', '1000'), step('succeeded', '1000')], '2000'), 'x', true);
    expect(late.status).toBe('completed');
    expect(late.statusMessage).toContain('the cancel came too late');
  });

  it('reports steps done and USDC spent of the budget', () => {
    const j = job('running', [step('succeeded', '1000'), step('running'), step('pending')], '1000');
    expect(jobProgress(j)).toEqual({
      job_status: 'running',
      steps_done: 1,
      steps_total: 3,
      spent_usdc: 0.001,
      budget_usdc: 0.01,
      spent_base_units: '1000',
      budget_base_units: '10000',
    });
    const task = jobTask(j, `${j.job_id}.${'a'.repeat(22)}`, false);
    expect(task).toMatchObject({ status: 'working', createdAt: j.created_at, lastUpdatedAt: j.updated_at, pollInterval: 1000 });
    expect(task.statusMessage).toBe('job running: 1/3 steps done; 0.001 of 0.01 USDC spent');
    expect(jobTask(j, 'x', true).statusMessage).toContain('cancel requested');
    expect(jobProgress(job('cancelled', [step('succeeded', '1000'), step('skipped')], '1000')).steps_done).toBe(2);
  });
});
