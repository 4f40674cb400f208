export { startGateway, type RunningGateway, type StartGatewayOptions } from './app.js';
export { StoreNotDurableError, type StoreDecision, type StoreDurabilityCheck } from './storeDurability.js';
export { configFromEnv, paymentChain, BASE_USDC, ConfigError, type ConfigDefaults, type GatewayConfig, type ChainName } from '@acg/config';
export { appRouter, type AppRouter } from './routers/index.js';
export { createServices, startRefunds, type CreateServicesOptions, type Services } from './services.js';
