import { Executor, isTransient } from '@acg/execution';
import type { Services } from '@acg/gateway';
import type { StepExecutor } from '@acg/jobs';

/** Job steps run through the Executor of @acg/execution: the same code as `POST /api/v1/execute` (a step's stored input is parsed here, once). */
export function stepExecutor(services: Services): StepExecutor {
  const executor = new Executor(services);
  return {
    async run(executionId, capabilityId, input, charge) {
      const { record, failure } = await executor.runInput(executionId, capabilityId, input, charge);
      return { status: record.status, result: record.result, error: record.error, transient: failure ? isTransient(failure) : false };
    },
    async find(executionId) {
      const r = await services.executions.get(executionId);
      return r ? { status: r.status, result: r.result, error: r.error } : undefined;
    },
  };
}
