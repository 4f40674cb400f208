/**
 * @acg/schemas: zod schemas (and inferred types) of every gateway resource, docs/spec-notes.md 2.1-2.9 with the
 * docs/decisions.md decisions; JSON Schema 2020-12 is generated from them (see ./jsonSchema.ts).
 */
export * from './primitives.js';
export * from './ids.js';
export * from './constants.js';
export * from './capability.js';
export * from './registryDocument.js';
export * from './legacyRegistry.js';
export * from './health.js';
export * from './liquidation.js';
export * from './liquidationPlan.js';
export * from './walletMonitor.js';
export * from './execution.js';
export * from './job.js';
export * from './limits.js';
export * from './paymentChallenge.js';
export * from './problem.js';
export * from './bundle.js';
export * from './account.js';
export * from './provider.js';
export * from './quote.js';
export * from './trust.js';
export * from './routing.js';
export * from './jsonSchema.js';
export * from './mcp.js';
export * from './mcpToolName.js';
export * from './strictJson.js';
export * from './discoveryResources.js';
