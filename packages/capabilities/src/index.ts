/**
 * @acg/capabilities: every capability as one definition (docs/decisions.md "Capabilities: one definition"):
 * catalog fields, zod input/output, price, and for executable ones `precondition` and `run`.
 * Apps compose `BUILTIN_CAPABILITIES` with their own (providers, tests) and hand the list to the
 * registry (documents) and @acg/execution (resolution, execution).
 */
export {
  CapabilityFailure,
  defineCapability,
  InvalidCapabilityDefinitionError,
  isExecutable,
  PAID_THROUGH_EXECUTE,
  type CallEvidence,
  type ProviderCredit,
  type ShareEarnings,
  type CapabilityCall,
  type CapabilityDefinition,
  type CapabilityDeps,
  type CapabilityExample,
  type CapabilityPrice,
  type ChainName,
  type DefineCapabilityParameters,
  type ExecutableCapability,
  type X402Mode,
} from './define.js';
export * from './builtin/index.js';
export { executableCapabilities, findCapability } from './find.js';
export { CapabilityCatalog, type CatalogSourceName } from './catalog.js';
