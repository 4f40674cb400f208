export {
  chainReconciliationFromEnv,
  chainReconciliationOptions,
  createWorkerServices,
  paymentRecoveryOptions,
  reconcileConfirmations,
  treasurySenderOf,
  type ChainReconciliationSettings,
  paymentRecoveryFromEnv,
  startWorker,
  workerOptionsFromEnv,
  type RunningWorker,
  type StartWorkerOptions,
  type WorkerServices,
} from './worker.js';
export { stepExecutor } from './stepExecutor.js';
export { liquidationsFromEnv } from './liquidationsConfig.js';
export { providerCreditRestorer, type ProviderCreditRestorerOptions } from './providerCredits.js';
