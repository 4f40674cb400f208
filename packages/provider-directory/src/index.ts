/**
 * @acg/provider-directory: third-party providers (docs/spec-notes.md 1; docs/decisions.md "Providers"): EIP-191 onboarding
 * ({@link ChallengeStore}, {@link ProviderOnboarding}), provider records ({@link ProviderStore}),
 * signed routing of calls to provider endpoints ({@link ProviderClient}), the capability an offer
 * becomes ({@link providerCapability}), the catalog source of provider capabilities
 * ({@link ProviderDirectory}), probes ({@link probeProviderCapability}), trust scores
 * ({@link trustScore}, {@link TrustRecords}; README "Trust scores", docs/trust-v1.md), and the
 * marketplace: contracts with several offers ({@link contractCapability}), their measurements
 * ({@link OfferStats}) and routing ({@link rankOffers}, {@link OfferScorer}; docs/marketplace.md). Money (ledger,
 * payouts, disputes) is @acg/provider-ledger's; this package only tells it about earnings.
 */
export { authorizedDigest, CHALLENGE_TTL_SECONDS, ChallengeStore, challengeMessage, type AuthorizedFields, type ChallengeScope } from './challenge.js';
export { MAX_PROVIDER_RESPONSE_BYTES, ProviderClient, type ProviderCallOptions, type ProviderCallOutcome } from './client.js';
export {
  contractCapability,
  contractsOf,
  providerCapability,
  routableOffers,
  routeContract,
  usdcBaseUnits,
  type Contract,
  type OfferOf,
  type ProviderCredit,
  type ProviderEarnings,
  type ProviderRuntime,
} from './definition.js';
export { OFFER_LATENCY_SAMPLES, OfferStats, successRateScorer, type OfferMeasurements } from './offerStats.js';
export { rankOffers, routePrice, type NoRouteReason, type OfferScorer, type RankedOffers, type RoutableOffer, type RoutingOptions } from './routing.js';
export { PROVIDERS_SOURCE, ProviderDirectory } from './directory.js';
export { createProcessProviders, type ProcessProviders, type ProcessProvidersOptions } from './processProviders.js';
export { ProviderError } from './errors.js';
export { compileJsonSchema, MAX_COMPILED_VALIDATORS, MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, schemaIssues, type SchemaIssue } from './jsonSchema.js';
export { newSigningSecret, ProviderOnboarding, type ProviderOnboardingOptions } from './onboarding.js';
export { probeProviderCapability } from './probe.js';
export { offerCapabilityId, ProviderStore, type ProviderRecord } from './store.js';
export {
  TRUST_FORMULA,
  TRUST_HALF_LIFE_OUTCOMES,
  TRUST_PROBE_WEIGHT,
  TRUST_RECOVERY_PROBES,
  TRUST_ROUTING_THRESHOLD,
  TRUST_TIERS,
  TRUST_WEIGHTS,
  TRUST_WINDOW_OUTCOMES,
  trustFormulaText,
  trustScore,
  trustTier,
  zeroCounts,
  type TrustCounts,
  type TrustInputs,
  type TrustOutcome,
  type TrustOutcomeKind,
  type TrustScore,
  type TrustScoreInputs,
  type TrustTier,
} from './trust.js';
export { trustScorer } from './trustScorer.js';
export { creditHoldSeconds, offerSubject, TrustRecords, type OfferSuspension, type OfferTrust, type TrustDispute, type TrustSubject } from './trustRecords.js';
export { QUOTE_RETENTION_SECONDS, QuoteStore, type QuoteRefusal, type StoredQuote } from './quotes.js';
