/**
 * @acg/config: the configuration the gateway and the worker share (Redis, key prefix, payment
 * chain and terms, capability chain URLs, wallet-monitor webhook policy), read from the
 * environment by {@link configFromEnv} with every problem reported at once. Apps import it from
 * here so that neither app imports the other (docs/decisions.md "Capabilities: one definition": apps are
 * composition roots).
 */
export {
  BASE_USDC,
  ConfigError,
  configFromEnv,
  paymentChain,
  PROVIDERS_DEFAULTS,
  type ChainName,
  type ConfigDefaults,
  type GatewayConfig,
  type ProvidersConfig,
  type StoreConfig,
} from './config.js';
export { chainClients } from './chainClients.js';
