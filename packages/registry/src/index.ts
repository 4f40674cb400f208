/**
 * @acg/registry: the capability catalog (data in the repo) and the discovery documents built from
 * it (docs/spec-notes.md 2.1-2.3, 4 "Discovery"). Pure functions: no I/O, no HTTP server (the gateway serves them).
 */
export type { CapabilityDescriptor, X402Mode } from './descriptor.js';
export {
  DEFAULT_ORGANIZATION,
  DuplicateCapabilityError,
  METRIC_DEFINITIONS,
  REGISTRY_VERSION,
  allDescriptors,
  buildCatalog,
  buildLegacyRegistry,
  expandTemplate,
  inputJsonSchema,
  outputJsonSchema,
  type BuildContext,
  type HealthSample,
} from './build.js';
export { deriveStatus, rollupOperationalStatus, type DerivedStatus, type OperationalRollup } from './status.js';
export { USDC_DECIMALS, formatUsdc, toBaseUnits } from './price.js';
export { DISCOVERY_DOCUMENTS, renderLlmsTxt } from './llmsTxt.js';
export { PAYMENT_SCHEME_GUIDE, paymentSchemeBullets, paymentSchemeSentence, type PaymentSchemeGuide } from './paymentSchemes.js';
export { SITEMAP_MAX_URLS, SITEMAP_PATHS, discoverySitemapEntries, escapeXml, renderSitemap, type DiscoveryTimes, type SitemapEntry } from './sitemap.js';
