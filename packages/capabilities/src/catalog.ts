import { compareCapabilities } from '@acg/schemas';
import { BUILTIN_CAPABILITIES } from './builtin/index.js';
import { isExecutable, type CapabilityDefinition, type ExecutableCapability } from './define.js';

/** A source of definitions known at run time (e.g. `providers`), replaced as a whole by {@link CapabilityCatalog.setSource}. */
export type CatalogSourceName = string;

/**
 * Every capability one deployment serves, as it is now: the fixed definitions (built-ins and any a
 * composition root adds) plus run-time sources such as provider capabilities (docs/decisions.md
 * "Capabilities: one definition", "Providers"). The registry documents, the OpenAPI document,
 * `POST /api/v1/execute`, job steps and MCP tools all read it, so a provider registered a moment
 * ago is listed, documented and executable everywhere at once. Reads are synchronous and cheap
 * (a cached sorted array and an id index); {@link onChange} tells caches to rebuild.
 *
 * An id is owned by the first source that defines it: the fixed definitions always win, and a
 * run-time definition whose id is already taken is left out (registration refuses such clashes
 * with a 409 before they get here).
 *
 * @example
 * const catalog = new CapabilityCatalog();           // BUILTIN_CAPABILITIES
 * catalog.setSource('providers', providerDefinitions);
 * catalog.find('intelligence.token_metadata')?.price; // { base_units: 2000n, unit: 'call' }
 */
export class CapabilityCatalog {
  private readonly fixed: readonly CapabilityDefinition[];
  private readonly sources = new Map<CatalogSourceName, readonly CapabilityDefinition[]>();
  private readonly listeners = new Set<() => void>();
  private sorted: readonly CapabilityDefinition[] = [];
  private byId = new Map<string, CapabilityDefinition>();
  private executables: ExecutableCapability[] = [];
  private revision = 0;

  /**
   * @param fixed definitions served for the life of the process (default `BUILTIN_CAPABILITIES`);
   *   throws when two share an id (a bug in the composition root).
   */
  constructor(fixed: readonly CapabilityDefinition[] = BUILTIN_CAPABILITIES) {
    const ids = new Set<string>();
    for (const d of fixed) {
      if (ids.has(d.id)) throw new Error(`capability ${d.id} is defined twice`);
      ids.add(d.id);
    }
    this.fixed = fixed;
    this.rebuild();
  }

  /** Every definition, in catalog order (product, then id). The array is replaced, never mutated: holding it is safe. */
  list(): readonly CapabilityDefinition[] {
    return this.sorted;
  }

  /** The definition with this id, or undefined. */
  find(id: string): CapabilityDefinition | undefined {
    return this.byId.get(id);
  }

  /** The executable definitions (those with `run`), in catalog order. */
  executable(): readonly ExecutableCapability[] {
    return this.executables;
  }

  /** Increases on every change; a cache keyed by it is current. */
  get version(): number {
    return this.revision;
  }

  /**
   * Replaces the definitions of `source`. Returns the ids left out because another source owns
   * them. Listeners run when the set changed.
   */
  setSource(source: CatalogSourceName, definitions: readonly CapabilityDefinition[]): string[] {
    const before = this.sources.get(source);
    this.sources.set(source, definitions);
    const dropped = this.rebuild();
    if (before !== definitions) this.emit();
    return dropped;
  }

  /** Calls `listener` after every change; returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private rebuild(): string[] {
    const byId = new Map<string, CapabilityDefinition>();
    const dropped: string[] = [];
    for (const d of this.fixed) byId.set(d.id, d);
    for (const definitions of this.sources.values()) {
      for (const d of definitions) {
        if (byId.has(d.id)) dropped.push(d.id);
        else byId.set(d.id, d);
      }
    }
    this.byId = byId;
    this.sorted = [...byId.values()].sort(compareCapabilities);
    this.executables = this.sorted.filter(isExecutable);
    this.revision += 1;
    return dropped;
  }

  private emit(): void {
    for (const listener of this.listeners) {
      try {
        listener();
      } catch {
        // a listener's failure (e.g. a cache) must not stop the others
      }
    }
  }
}
