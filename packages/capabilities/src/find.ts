import { compareCapabilities } from '@acg/schemas';
import { BUILTIN_CAPABILITIES } from './builtin/index.js';
import { isExecutable, type CapabilityDefinition, type ExecutableCapability } from './define.js';

/**
 * The definition with this id among `definitions` (default: the built-ins); undefined when unknown.
 *
 * @example
 * findCapability('intelligence.wallet_balances')?.price // { base_units: 1000n, unit: 'call' }
 */
export function findCapability(id: string, definitions: readonly CapabilityDefinition[] = BUILTIN_CAPABILITIES): CapabilityDefinition | undefined {
  return definitions.find((d) => d.id === id);
}

/**
 * The definitions that run through `POST /api/v1/execute` (they have `run`), in catalog order
 * (product, then id). Each has zod `input`/`output` schemas and a price.
 */
export function executableCapabilities(definitions: readonly CapabilityDefinition[] = BUILTIN_CAPABILITIES): ExecutableCapability[] {
  return definitions.filter(isExecutable).sort(compareCapabilities);
}
