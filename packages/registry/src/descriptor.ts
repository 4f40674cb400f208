import type { CapabilityDefinition, X402Mode } from '@acg/capabilities';

export type { X402Mode };

/**
 * What the registry reads of a capability: its definition (`defineCapability` of
 * @acg/capabilities). Only the type is imported: the registry never runs a capability and does no
 * I/O; the list of definitions (built-ins plus run-time ones) is passed in by the gateway
 * through {@link BuildContext}.
 */
export type CapabilityDescriptor = CapabilityDefinition;
