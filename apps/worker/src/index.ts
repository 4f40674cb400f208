export { createWorkerServices, paymentRecoveryFromEnv, startWorker, type RunningWorker, type StartWorkerOptions, type WorkerServices } from './worker.js';
export { stepExecutor } from './stepExecutor.js';
export { liquidationsFromEnv } from './liquidationsConfig.js';
