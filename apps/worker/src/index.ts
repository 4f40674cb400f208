export { startWorker, type RunningWorker, type StartWorkerOptions } from './worker.js';
export { stepExecutor } from './stepExecutor.js';
export { liquidationsFromEnv } from './liquidationsConfig.js';
