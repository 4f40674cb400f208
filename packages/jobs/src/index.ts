export { MAX_BUDGET, pendingStep, planJob, PlanError, type JobRequestInput } from './plan.js';
export { JOB_QUEUE, JobQueue } from './queue.js';
export { startJobRunner, UPTO_DEADLINE_MARGIN_SECONDS, type JobObserver, type JobRunnerOptions } from './runner.js';
export { cancelEffect, JOB_ENDED } from './cancel.js';
export { JobStore } from './store.js';
export type { JobStatus, StepCapability, StepExecutor, StoredJob, StoredJobPayment, StoredStep } from './types.js';
export { baseUnitsToUsdc, usdcToBaseUnits } from './units.js';
export { jobView, type JobSettlement } from './view.js';
