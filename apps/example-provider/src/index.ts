/**
 * @acg/example-provider: an example third-party provider built on `@acg/provider-kit` (docs/decisions.md
 * "Providers"). `src/main.ts` is the process; this module exports its parts for tests.
 */
export { exampleCapabilities, MAX_REPORT_ADDRESSES, parseObjective } from './capabilities/index.js';
export { CHAIN_NAMES, CHAINS, chainReaders, type ChainName, type ChainReader, type ChainRpcUrls } from './chains.js';
export { exampleProviderConfig, type ExampleProviderConfig } from './config.js';
export { onboardWithRetry, type OnboardingAttemptEvent, type OnboardWithRetryOptions } from './onboarding.js';
export { exampleOffers, type ExampleOffer, type ExampleOfferOptions } from './offers.js';
