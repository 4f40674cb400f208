/**
 * @acg/execution: the one execution path (request → validate → pay → execute → record): resolve a
 * capability and parse its input once (`resolveCapability`), run it and record the execution
 * (`Executor`, `ExecutionStore`) and its latency (`Telemetry`). Used by the gateway's execute and
 * jobs routes and by the worker's job steps.
 */
export {
  Executor,
  isTransient,
  NOT_SETTLED_TX_HASH,
  type EarlyRun,
  type ExecutionCharge,
  type ExecutionObserver,
  type ExecutionOutcome,
  type ExecutorDeps,
} from './executor.js';
export { ExecutionStore, newExecutionId, succeededExecutionAnswer, type ExecutionRecord } from './executions.js';
export {
  CapabilityResolutionError,
  checkPrecondition,
  executableDefinition,
  parseCapabilityInput,
  resolveCapability,
  type CapabilityResolutionErrorCode,
  type Resolution,
  type ResolvedCapability,
} from './resolve.js';
export { Telemetry, type LatencySummary } from './telemetry.js';
