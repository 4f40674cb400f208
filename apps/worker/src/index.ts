export {
  createWorkerServices,
  paymentRecoveryFromEnv,
  startWorker,
  workerOptionsFromEnv,
  type RunningWorker,
  type StartWorkerOptions,
  type WorkerServices,
} from './worker.js';
export { stepExecutor } from './stepExecutor.js';
export { liquidationsFromEnv } from './liquidationsConfig.js';
