import { Executor, isTransient, type Services } from '@acg/gateway';
import type { StepExecutor } from '@acg/jobs';

/** Job steps run through the gateway's Executor: the same code as `POST /api/v1/execute`. */
export function stepExecutor(services: Services): StepExecutor {
  const executor = new Executor(services);
  return {
    async run(executionId, capabilityId, input, charge) {
      const { record, failure } = await executor.run(executionId, capabilityId, input, charge);
      return { status: record.status, result: record.result, error: record.error, transient: failure ? isTransient(failure) : false };
    },
    async find(executionId) {
      const r = await services.executions.get(executionId);
      return r ? { status: r.status, result: r.result, error: r.error } : undefined;
    },
  };
}
