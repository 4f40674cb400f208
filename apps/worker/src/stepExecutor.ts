import { Executor, isTransient, type ExecutionStore, type ExecutorDeps } from '@acg/execution';
import type { StepExecutor } from '@acg/jobs';

/**
 * Job steps run through the Executor of @acg/execution: the same code as `POST /api/v1/execute`
 * (a step's stored input is parsed here, once). Takes only what the Executor needs (packages'
 * types), so any composition of Redis, stores and capability definitions can run steps.
 */
export function stepExecutor(deps: ExecutorDeps & { executions: Pick<ExecutionStore, 'save' | 'get'> }): StepExecutor {
  const executor = new Executor(deps);
  return {
    async run(executionId, capabilityId, input, charge) {
      const { record, failure } = await executor.runInput(executionId, capabilityId, input, charge);
      return { status: record.status, result: record.result, error: record.error, transient: failure ? isTransient(failure) : false, proof: record.proof };
    },
    async find(executionId) {
      const r = await deps.executions.get(executionId);
      return r ? { status: r.status, result: r.result, error: r.error, proof: r.proof } : undefined;
    },
  };
}
